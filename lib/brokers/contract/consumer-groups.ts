/**
 * Consumer groups at the broker boundary: what a feature may ask of a connection whose broker has
 * consumer groups with committed offsets (`BrokerAdapter.consumerGroups`, absent on brokers without
 * them), and the types and refusals it answers with. Kafka implements it
 * (lib/brokers/kafka/consumer-groups.ts, consumer-group-skip.ts).
 */
import { AppError } from "@/lib/errors";
import type { Letter } from "@/lib/brokers/contract/letter";

export interface GroupMember {
  memberId: string;
  clientId: string;
  host: string;
  /** Topic-partitions assigned to this member (decoded from the consumer protocol's assignment). */
  assignments: Array<{ topic: string; partitions: number[] }>;
}

export interface GroupPartition {
  topic: string;
  partition: number;
  /** null: the group never committed an offset for this partition (it is only assigned). */
  committed: bigint | null;
  /** Log start and high watermark now; null when the topic is gone or its leader did not answer. */
  start: bigint | null;
  end: bigint | null;
  /**
   * end − committed; with no committed offset end − start (what a consumer starting from the
   * earliest offset has to read). null when the offsets are unknown.
   */
  lag: bigint | null;
  /** The member this partition is assigned to, if any. */
  memberId: string | null;
}

export interface ConsumerGroup {
  groupId: string;
  /** "consumer" for a classic consumer group, "" for a group that only stores offsets. */
  protocolType: string;
  /** Kafka's state: Stable, PreparingRebalance, CompletingRebalance, Empty, Dead; "" when unknown. */
  state: string;
  /** The assignor in use (e.g. "range", "cooperative-sticky"), "" when the group is empty. */
  protocol: string;
  /** Node id of the group's coordinator. */
  coordinator: number;
  members: GroupMember[];
  partitions: GroupPartition[];
  /** Why part of this group could not be read this round (operator words); null when all was read. */
  problem: string | null;
}

export interface SkippedGroup {
  groupId: string;
  protocolType: string;
  reason: string;
}

export interface ConsumerGroupsRound {
  sampledAt: Date;
  groups: ConsumerGroup[];
  /** Groups not shown: other protocols (share groups, Connect workers), and groups with nothing to show. */
  skipped: SkippedGroup[];
  /**
   * Brokers that did not list their groups this round: the groups they coordinate are missing from
   * `groups` (not "moved"); a sampler should not read their absence as anything.
   */
  brokersNotListed: number[];
  /** Requests sent this round (see the file's comment). */
  calls: number;
}

export interface GroupMemberRef {
  memberId: string;
  clientId: string;
  host: string;
}

/** The group has members: Kafka lets nobody else set its offsets. `details.members` names them. */
export class ConsumerGroupActiveError extends AppError {
  readonly members: GroupMemberRef[];
  constructor(groupId: string, members: GroupMemberRef[], extra: { copies?: SkipCopy[] } = {}) {
    const names = members.map((m) => `${m.clientId} (${m.memberId}) on ${m.host}`).join(", ");
    super("conflict:consumer-group", {
      userMessage: `Consumer group "${groupId}" has ${members.length || "active"} member${members.length === 1 ? "" : "s"}${names ? `: ${names}` : ""}. Kafka only lets the console set its offsets while the group is empty: stop or scale its consumers to zero, then try again.${extra.copies?.length ? ` ${copiesNote(extra.copies)}` : ""}`,
      details: { groupId, members, copies: extra.copies?.map(copyDetail) ?? [] },
    });
    this.name = "ConsumerGroupActiveError";
    this.members = members;
  }
}

/** The committed offset is not the one the operator looked at (the group moved on, or someone else skipped). */
export class CommittedOffsetMovedError extends AppError {
  constructor(
    groupId: string,
    topic: string,
    partition: number,
    expected: bigint | null,
    actual: bigint | null,
    extra: { copies?: SkipCopy[] } = {},
  ) {
    const show = (o: bigint | null) => (o === null ? "none" : o.toString());
    super("conflict:committed-offset", {
      userMessage: `The committed offset of group "${groupId}" on ${topic}/${partition} is ${show(actual)}, not ${show(expected)} as when you looked. Nothing was skipped; look at the partition again.${extra.copies?.length ? ` ${copiesNote(extra.copies)}` : ""}`,
      details: {
        groupId,
        topic,
        partition,
        expected: show(expected),
        actual: show(actual),
        copies: extra.copies?.map(copyDetail) ?? [],
      },
    });
    this.name = "CommittedOffsetMovedError";
  }
}

/** Operator words for copies a refused or broken-off skip already made. */
export const copiesNote = (copies: SkipCopy[]) =>
  `${copies.length} record${copies.length === 1 ? " was" : "s were"} already copied to the DLT; a retry copies ${copies.length === 1 ? "it" : "them"} again.`;
/** A copy as error details carry it (offsets as decimal text). */
export const copyDetail = (c: SkipCopy) => ({
  offset: c.offset.toString(),
  dltPartition: c.dltPartition,
  dltOffset: c.dltOffset.toString(),
});

export type RecordAt =
  /** The record a consumer of the group gets next: the first at or after the offset. */
  | { kind: "record"; offset: bigint; letter: Letter }
  /** The offset lies before the log start: retention deleted it (the consumer will reset). */
  | { kind: "gone"; start: bigint; end: bigint }
  /** Nothing at or after the offset: the group is caught up. */
  | { kind: "none"; start: bigint; end: bigint };

export interface SkipRequest {
  groupId: string;
  topic: string;
  partition: number;
  /** The committed offset the operator saw (null: none); the skip is refused when it moved. */
  expectedCommitted: bigint | null;
  /** Last offset skipped (inclusive); default: the record at the committed offset only. */
  upToOffset?: bigint;
  /** Default `<topic>.DLT`. */
  dlt?: string;
  /** Create the DLT when it does not exist (with the source's partition count). Default false. */
  createDlt?: boolean;
  /** The operator's reason: `kafka_dlt-exception-message` of every copy. Required. */
  reason: string;
  signal?: AbortSignal;
}

export interface SkipCopy {
  /** Offset of the skipped record in the source partition. */
  offset: bigint;
  dltPartition: number;
  dltOffset: bigint;
}

export interface SkipResult {
  groupId: string;
  topic: string;
  partition: number;
  dlt: string;
  dltCreated: boolean;
  /** The committed offset before (null: none) and after (`upToOffset + 1`). */
  committedBefore: bigint | null;
  committedAfter: bigint;
  /** One per skipped record, in offset order (offsets without a record, e.g. transaction markers, have none). */
  copies: SkipCopy[];
}

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
