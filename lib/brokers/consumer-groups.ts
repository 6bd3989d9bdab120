/**
 * Consumer groups at the broker boundary: what a feature may ask of a connection whose
 * broker has consumer groups with committed offsets (Kafka). `BrokerAdapter.consumerGroups` is
 * absent on brokers without them. The data types are Kafka's (lib/brokers/kafka/consumer-groups.ts,
 * consumer-group-skip.ts); features use them through this file only.
 */
import type { ConsumerGroupsRound } from "@/lib/brokers/kafka/consumer-groups";
import type { GroupMemberRef, RecordAt, SkipRequest, SkipResult } from "@/lib/brokers/kafka/consumer-group-skip";

export type {
  ConsumerGroup,
  ConsumerGroupsRound,
  GroupMember,
  GroupPartition,
  GroupSample,
  SkippedGroup,
  StuckPartition,
} from "@/lib/brokers/kafka/consumer-groups";
export { DEFAULT_STUCK_AFTER_MS, flagStuckPartitions, samplesOf } from "@/lib/brokers/kafka/consumer-groups";
export type {
  GroupMemberRef,
  RecordAt,
  SkipCopy,
  SkipRequest,
  SkipResult,
} from "@/lib/brokers/kafka/consumer-group-skip";
export {
  CommittedOffsetMovedError,
  ConsumerGroupActiveError,
  SKIP_EXCEPTION_FQCN,
} from "@/lib/brokers/kafka/consumer-group-skip";

export interface ConsumerGroupOps {
  /** Every consumer group with members, committed and end offsets and lag, in a constant number of requests. */
  read(opts?: { signal?: AbortSignal }): Promise<ConsumerGroupsRound>;
  /** The record a group's consumer gets next from `offset` (null: the log start), read without joining the group. */
  recordAt(
    at: { topic: string; partition: number; offset: bigint | null },
    opts?: { maxBodyBytes?: number },
  ): Promise<RecordAt>;
  /** The group's active members now: empty when its offsets may be set. */
  members(groupId: string): Promise<GroupMemberRef[]>;
  /** Copies the records to the DLT (confirmed), then sets the empty group's committed offset past them. */
  skipToDlt(req: SkipRequest): Promise<SkipResult>;
}
