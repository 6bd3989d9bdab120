/** URLs of the consumer-group views. Pure. */
const seg = encodeURIComponent;

export const groupsHref = (connectionId?: string) => (connectionId ? `/groups#${seg(connectionId)}` : "/groups");
export const groupHref = (connectionId: string, groupId: string) => `/groups/${seg(connectionId)}/${seg(groupId)}`;
export const partitionHref = (connectionId: string, groupId: string, topic: string, partition: number) =>
  `${groupHref(connectionId, groupId)}/${seg(topic)}/${partition}`;
/** A skip job's progress, polled by the partition page. */
export const skipApiHref = (jobId: string) => `/api/groups/skips/${seg(jobId)}`;
