import { operationRoute } from "@/lib/api/route";
import { listGroupsOperation, toGroupList } from "@/lib/api/v1";
import { listGroups } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** A DLQ's groups from the triage index (lib/api/v1/groups.ts); listGroups masks labels and values for the role. */
export const GET = operationRoute(
  listGroupsOperation,
  { permission: "triage:read", action: "triage.groups" },
  async ({ actor, meta, query }) =>
    toGroupList(await listGroups(actor, meta, { connectionId: query.connectionId, queue: query.queue, by: query.by })),
);
