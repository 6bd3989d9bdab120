import "server-only";
import { ConfigResourceTypes, type Admin, type IHeaders, type Kafka, type Message } from "kafkajs";
import type { KafkaConnectionConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import {
  CommittedOffsetMovedError,
  ConsumerGroupActiveError,
  copiesNote,
  copyDetail,
  type GroupMemberRef,
  type RecordAt,
  type SkipCopy,
  type SkipRequest,
  type SkipResult,
} from "@/lib/brokers/contract/consumer-groups";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { topicHasLeaders } from "@/lib/brokers/kafka/topic-ready";
import {
  createCluster,
  createKafka,
  createProducerWithCluster,
  type InternalCluster,
  type InternalRecord,
  type KafkaClientOptions,
} from "@/lib/brokers/kafka/client";
import { mapKafkaError } from "@/lib/brokers/kafka/errors";
import { DEFAULT_FETCH_LIMITS, readPartition, type FetchLimits } from "@/lib/brokers/kafka/fetcher";
import { SPRING } from "@/lib/brokers/kafka/headers";
import { OPERATOR_SKIP_FQCN } from "@/lib/brokers/kafka/failure-words";
import { toLetter } from "@/lib/brokers/kafka/letter";
import { lazyProducer } from "@/lib/brokers/kafka/mover";
import { formatDuration } from "@/lib/brokers/kafka/retention";

/**
 * A partition stuck behind one poison record: the record a group waits on, and
 * "move it to the DLT and skip it".
 *
 * The skip, in order:
 *   1. the group must have no members (DescribeGroups), and its committed offset must still be the
 *      one the operator looked at;
 *   2. each record from the committed offset up to and including `upToOffset` is read by offset
 *      (no group joined) and copied to the DLT with its key, value, headers and timestamp, plus
 *      Spring's `kafka_dlt-*` headers naming its origin and the operator's reason; the producer is
 *      idempotent with acks=all, one record at a time, each confirmed before the next;
 *   3. the group is checked again (members, committed offset), then its committed offset for that
 *      one partition is set to `upToOffset + 1` by an OffsetCommit with generation −1 and no member
 *      id, sent to the group's coordinator: what Kafka's own AdminClient.alterConsumerGroupOffsets
 *      sends. The broker itself refuses it (UNKNOWN_MEMBER_ID) when a member joined meanwhile, so no
 *      member can lose records to a race. kafkajs's admin.setOffsets is not used: it joins the group
 *      as a consumer (a member) and seeks, which is neither atomic nor invisible to the group.
 * A crash between 2 and 3 leaves copies in the DLT and the offset where it was: a retry copies them
 * again (duplicates, never a loss). Nothing else in the partition or the group is touched.
 *
 * Copies keep the original timestamp, so the DLT's time-based retention counts from it: a skip is
 * refused, before anything is copied, when a copy would have less than an hour left in the DLT
 * (unless the DLT stamps LogAppendTime, where the broker sets the time).
 *
 * Copies: original headers are kept in their order, except headers named like the `kafka_dlt-*`
 * headers written here (an earlier dead-lettering's), which this dead-lettering replaces, so the
 * console shows this origin. A header without value cannot be written by kafkajs 2.2.4: such a
 * skip is refused before anything is copied. Each copy goes to the DLT partition of the same number
 * when the DLT has it, else to `partition % dltPartitions`; all copies of one skip go to one DLT
 * partition, in offset order.
 */

export const SKIP_EXCEPTION_FQCN = OPERATOR_SKIP_FQCN;

export interface GroupClientDeps {
  /** A group-less client (client.ts `createCluster`), connected. */
  cluster: InternalCluster;
  /** kafkajs admin, connected. */
  admin: Admin;
  /** Produces one record with acks=all on an idempotent producer; resolves once acknowledged. */
  produce(topic: string, message: Message): Promise<{ partition: number; offset: string }>;
  mapError(e: unknown, topic?: string): BrokerError;
  fetch?: Partial<FetchLimits>;
  /** The clock retention checks compare against (epoch ms); Date.now when absent. */
  now?: () => number;
}

/**
 * The clients a connection's group operations need (a reader, an admin, the idempotent producer),
 * connected. The adapter may later hand in its own; `close` disconnects what this opened.
 */
export async function openGroupClient(
  config: KafkaConnectionConfig,
  client?: KafkaClientOptions,
): Promise<GroupClientDeps & { kafka: Kafka; close(): Promise<void> }> {
  const kafka = createKafka(config, client);
  const endpoint = config.brokers.join(",");
  const mapError = (e: unknown, topic?: string) => mapKafkaError(e, { endpoint, topic, connection: config.id });
  const cluster = createCluster(kafka);
  const admin = kafka.admin();
  const producer = lazyProducer(() =>
    createProducerWithCluster(kafka, {
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
    }),
  );
  try {
    await Promise.all([cluster.connect(), admin.connect()]);
  } catch (e) {
    await Promise.allSettled([cluster.disconnect(), admin.disconnect()]);
    throw mapError(e);
  }
  return {
    kafka,
    cluster,
    admin,
    mapError,
    async produce(topic, message) {
      const [meta] = await producer.send(topic, message);
      return { partition: meta.partition, offset: String(meta.baseOffset ?? meta.offset) };
    },
    async close() {
      await producer.close();
      await Promise.allSettled([cluster.disconnect(), admin.disconnect()]);
    },
  };
}

interface CommitBroker {
  offsetCommit(req: {
    groupId: string;
    groupGenerationId: number;
    memberId: string;
    retentionTime?: number;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>;
  }): Promise<unknown>;
}

const errorType = (e: unknown): string | undefined => {
  let cur = e as { type?: string; originalError?: unknown; cause?: unknown } | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 8; i++) {
    if (cur.type && cur.type !== "UNKNOWN") return cur.type;
    cur = (cur.originalError ?? cur.cause) as typeof cur;
  }
  return undefined;
};

/**
 * Runs `op` with `topic` in the reader's metadata. kafkajs refreshes a client's metadata for every
 * topic it was ever given; once one of them is deleted every refresh fails: then the missing ones
 * are dropped and `op` runs once more (as topics.ts's `onTopic`).
 */
async function onTopic<T>(deps: GroupClientDeps, topic: string, op: () => Promise<T>): Promise<T> {
  const c = deps.cluster;
  try {
    await c.addTargetTopic(topic);
    return await op();
  } catch (e) {
    const mapped = deps.mapError(e, topic);
    if (mapped.kind !== "not_found") throw mapped;
  }
  const existing = new Set(await deps.admin.listTopics().catch((e: unknown) => Promise.reject(deps.mapError(e))));
  if (!existing.has(topic)) throw notFound(topic);
  for (const t of [...c.targetTopics]) if (!existing.has(t)) c.targetTopics.delete(t);
  try {
    await c.refreshMetadata();
    await c.addTargetTopic(topic);
    return await op();
  } catch (e) {
    const mapped = deps.mapError(e, topic);
    throw mapped.kind === "not_found" ? notFound(topic) : mapped;
  }
}

const notFound = (topic: string) =>
  new BrokerError("not_found", { userMessage: `Topic "${topic}" does not exist (any more).` });

/** Log start and end (last stable offset) of one partition, now. */
async function partitionRange(
  deps: GroupClientDeps,
  topic: string,
  partition: number,
): Promise<{ start: bigint; end: bigint; partitions: number }> {
  return onTopic(deps, topic, async () => {
    const c = deps.cluster;
    await c.refreshMetadataIfNecessary();
    const all = c.findTopicPartitionMetadata(topic);
    if (!all.some((p) => p.partitionId === partition))
      throw new BrokerError("not_found", { userMessage: `Topic "${topic}" has no partition ${partition}.` });
    const [[low], [high]] = await Promise.all(
      [true, false].map((fromBeginning) =>
        c.fetchTopicsOffset([{ topic, fromBeginning, partitions: [{ partition }] }]),
      ),
    );
    const at = (r: typeof low) => r?.partitions.find((p) => p.partition === partition)?.offset;
    const start = at(low);
    const end = at(high);
    if (start === undefined || end === undefined)
      throw Object.assign(new Error(`no offsets for ${topic}/${partition}`), { type: "LEADER_NOT_AVAILABLE" });
    return { start: BigInt(start), end: BigInt(end), partitions: all.length };
  });
}

/** `RecordAt` with the raw record, which Kafka's own callers need. */
export type KafkaRecordAt =
  | (Extract<RecordAt, { kind: "record" }> & { record: InternalRecord })
  | Exclude<RecordAt, { kind: "record" }>;

/**
 * The record at `offset` of a partition (normally a group's committed offset; null: the log start,
 * where a group without committed offset starts reading from the beginning), as a Letter, read by a
 * plain Fetch: no group joined, nothing committed. An offset that holds no record (a transaction
 * marker, a compacted record) gives the next record, which is what the group's consumer gets.
 * `position` of the letter is its offset.
 */
export async function readRecordAt(
  deps: GroupClientDeps,
  at: { topic: string; partition: number; offset: bigint | null },
  opts: { maxBodyBytes?: number } = {},
): Promise<KafkaRecordAt> {
  const { topic, partition } = at;
  const { start, end } = await partitionRange(deps, topic, partition);
  const from = at.offset ?? start;
  if (from < start) return { kind: "gone", start, end };
  if (from >= end) return { kind: "none", start, end };
  const record = await firstRecordFrom(deps, topic, partition, from, end);
  if (!record) return { kind: "none", start, end };
  const offset = BigInt(record.offset);
  return {
    kind: "record",
    offset,
    record,
    letter: toLetter(topic, partition, record, Number(offset), { maxBodyBytes: opts.maxBodyBytes, configOrigin: null }),
  };
}

async function firstRecordFrom(
  deps: GroupClientDeps,
  topic: string,
  partition: number,
  from: bigint,
  end: bigint,
): Promise<InternalRecord | null> {
  const limits = { ...DEFAULT_FETCH_LIMITS, ...deps.fetch, maxBytesPerPartition: 64 * 1024 };
  try {
    for await (const r of readPartition(deps.cluster, topic, partition, from, end, limits)) return r;
  } catch (e) {
    throw deps.mapError(e, topic);
  }
  return null;
}

/**
 * The group's members now (DescribeGroups): empty when Kafka would let the console set its offsets.
 * A job waiting for a group to be scaled to zero polls this. Refuses groups that are not consumer groups.
 */
export async function groupMembers(
  deps: Pick<GroupClientDeps, "admin" | "mapError">,
  groupId: string,
): Promise<GroupMemberRef[]> {
  return membersOf(deps, groupId);
}

async function membersOf(
  deps: Pick<GroupClientDeps, "admin" | "mapError">,
  groupId: string,
): Promise<GroupMemberRef[]> {
  let d: Awaited<ReturnType<Admin["describeGroups"]>>["groups"][number] | undefined;
  try {
    d = (await deps.admin.describeGroups([groupId])).groups.find((g) => g.groupId === groupId);
  } catch (e) {
    throw deps.mapError(e);
  }
  if (!d) throw new BrokerError("not_found", { userMessage: `Consumer group "${groupId}" was not found.` });
  if (d.protocolType !== "consumer" && d.protocolType !== "") {
    throw new BrokerError("bad_request", {
      userMessage: `"${groupId}" is a ${d.protocolType} group, not a consumer group: the console does not skip records for it.`,
    });
  }
  return d.members.map((m) => ({ memberId: m.memberId, clientId: m.clientId, host: m.clientHost }));
}

/** The group's committed offset on one partition now (null: none). */
async function committedOf(
  deps: GroupClientDeps,
  groupId: string,
  topic: string,
  partition: number,
): Promise<bigint | null> {
  let res: Awaited<ReturnType<Admin["fetchOffsets"]>>;
  try {
    res = await deps.admin.fetchOffsets({ groupId, topics: [topic] });
  } catch (e) {
    throw deps.mapError(e, topic);
  }
  const o = res.find((t) => t.topic === topic)?.partitions.find((p) => p.partition === partition)?.offset;
  return o === undefined || BigInt(o) < 0n ? null : BigInt(o);
}

async function assertUnchanged(deps: GroupClientDeps, req: SkipRequest, copies: SkipCopy[]): Promise<bigint | null> {
  const members = await membersOf(deps, req.groupId);
  if (members.length) throw new ConsumerGroupActiveError(req.groupId, members, { copies });
  const committed = await committedOf(deps, req.groupId, req.topic, req.partition);
  if (committed !== req.expectedCommitted)
    throw new CommittedOffsetMovedError(req.groupId, req.topic, req.partition, req.expectedCommitted, committed, {
      copies,
    });
  return committed;
}

const int32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64be = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};

/** Names of the headers a skip writes (an earlier dead-lettering's of the same name are replaced). */
const DLT_HEADER_NAMES: ReadonlySet<string> = new Set([
  SPRING.originalTopic,
  SPRING.originalPartition,
  SPRING.originalOffset,
  SPRING.originalTimestamp,
  SPRING.originalTimestampType,
  SPRING.originalConsumerGroup,
  SPRING.message,
  SPRING.exceptionFqcn,
]);

/** The copy of a skipped record: its key, value, timestamp and headers, plus Spring's `kafka_dlt-*` headers. */
export function dltCopyOf(
  record: InternalRecord,
  origin: { topic: string; partition: number; groupId: string; reason: string },
): Message {
  const headers: IHeaders = {};
  for (const [name, v] of Object.entries(record.headers ?? {})) {
    if (DLT_HEADER_NAMES.has(name)) continue;
    const values = Array.isArray(v) ? v : [v];
    if (values.some((x) => x === null || x === undefined)) throw new NullHeader(name, record.offset);
    headers[name] = v as Buffer | Buffer[];
  }
  const tsType = record.batchContext?.timestampType === 1 ? "LogAppendTime" : "CreateTime";
  headers[SPRING.originalTopic] = Buffer.from(origin.topic, "utf8");
  headers[SPRING.originalPartition] = int32be(origin.partition);
  headers[SPRING.originalOffset] = int64be(BigInt(record.offset));
  headers[SPRING.originalTimestamp] = int64be(BigInt(record.timestamp));
  headers[SPRING.originalTimestampType] = Buffer.from(tsType, "utf8");
  headers[SPRING.originalConsumerGroup] = Buffer.from(origin.groupId, "utf8");
  headers[SPRING.exceptionFqcn] = Buffer.from(SKIP_EXCEPTION_FQCN, "utf8");
  headers[SPRING.message] = Buffer.from(origin.reason, "utf8");
  return {
    key: record.key === null ? null : Buffer.from(record.key),
    value: record.value === null ? null : Buffer.from(record.value),
    timestamp: record.timestamp,
    headers,
  };
}

export class NullHeader extends Error {
  constructor(
    readonly header: string,
    readonly offset: string,
  ) {
    super(`header ${header} of the record at offset ${offset} has no value`);
  }
}

/** A copy must have at least this long in the DLT before its retention may delete it. */
const MIN_TIME_IN_DLT_MS = 60 * 60_000;

async function assertRetentionKeeps(
  deps: GroupClientDeps,
  dlt: string,
  topic: string,
  partition: number,
  oldest: { offset: string; ms: number },
): Promise<void> {
  let entries: Array<{ configName: string; configValue: string }>;
  try {
    const res = await deps.admin.describeConfigs({
      includeSynonyms: false,
      resources: [
        { type: ConfigResourceTypes.TOPIC, name: dlt, configNames: ["retention.ms", "message.timestamp.type"] },
      ],
    });
    entries = res.resources.find((r) => r.resourceName === dlt)?.configEntries ?? [];
  } catch (e) {
    throw deps.mapError(e, dlt);
  }
  const get = (n: string) => entries.find((c) => c.configName === n)?.configValue;
  if (get("message.timestamp.type") === "LogAppendTime") return;
  const retentionMs = Number(get("retention.ms") ?? "-1");
  if (!Number.isFinite(retentionMs) || retentionMs < 0) return;
  if (oldest.ms + retentionMs < (deps.now ?? Date.now)() + MIN_TIME_IN_DLT_MS) {
    throw new BrokerError("bad_request", {
      userMessage: `Record ${oldest.offset} of ${topic}/${partition} is from ${new Date(oldest.ms).toISOString()}; its copy keeps that timestamp, and "${dlt}" keeps records for ${formatDuration(retentionMs)}, so the copy would be deleted within the hour. Raise the DLT's retention.ms (or choose another DLT) first. Nothing was copied.`,
    });
  }
}

/** Topic names and partition counts of the cluster now (one Metadata request). */
async function topicPartitionCount(deps: GroupClientDeps, topic: string): Promise<number | null> {
  try {
    const md = await deps.admin.fetchTopicMetadata({ topics: [] });
    return md.topics.find((t) => t.name === topic)?.partitions.length ?? null;
  } catch (e) {
    throw deps.mapError(e, topic);
  }
}

/**
 * Copies the records from the group's committed offset up to and including `upToOffset` of one
 * partition to the DLT, then moves the group's committed offset past them (see the file's comment).
 * Refuses, before anything is copied, when the group has members (`ConsumerGroupActiveError`), when
 * its committed offset is not `expectedCommitted` (`CommittedOffsetMovedError`), when the records
 * are gone or `upToOffset` is outside the partition (`bad_request`), and when the DLT is missing
 * and may not be created (`not_found`).
 */
export async function skipToDlt(deps: GroupClientDeps, req: SkipRequest): Promise<SkipResult> {
  const { groupId, topic, partition, signal } = req;
  const reason = req.reason.trim();
  if (!reason)
    throw new BrokerError("bad_request", {
      userMessage: "State why the record is skipped: the reason travels with the copy in the DLT.",
    });
  const dlt = req.dlt ?? `${topic}.DLT`;
  if (dlt === topic)
    throw new BrokerError("bad_request", { userMessage: `The dead-letter topic cannot be "${topic}" itself.` });

  const committedBefore = await assertUnchanged(deps, req, []);
  const range = await partitionRange(deps, topic, partition);
  const from = committedBefore ?? range.start;
  if (from < range.start) {
    throw new BrokerError("bad_request", {
      userMessage: `The records from offset ${from} of ${topic}/${partition} were deleted by retention (the log starts at ${range.start}); there is nothing to copy. The group's consumer resets by its auto.offset.reset.`,
    });
  }
  if (from >= range.end)
    throw new BrokerError("bad_request", {
      userMessage: `Group "${groupId}" has read everything in ${topic}/${partition} (committed ${from}, end ${range.end}): nothing to skip.`,
    });
  let upTo = req.upToOffset;
  if (upTo === undefined) {
    const first = await firstRecordFrom(deps, topic, partition, from, range.end);
    if (!first)
      throw new BrokerError("bad_request", {
        userMessage: `No record to skip at or after offset ${from} of ${topic}/${partition}.`,
      });
    upTo = BigInt(first.offset);
  }
  if (upTo < from || upTo >= range.end) {
    throw new BrokerError("bad_request", {
      userMessage: `Skip up to offset ${upTo} is outside what the group has left to read in ${topic}/${partition} (${from} to ${range.end - 1n}).`,
    });
  }
  const last = upTo;
  const records = () =>
    readPartition(deps.cluster, topic, partition, from, last + 1n, { ...DEFAULT_FETCH_LIMITS, ...deps.fetch });

  // Everything that could refuse a copy is checked before the first one is made.
  let count = 0;
  let oldest: { offset: string; ms: number } | null = null;
  try {
    for await (const r of records()) {
      signal?.throwIfAborted();
      dltCopyOf(r, { topic, partition, groupId, reason });
      count++;
      const ms = Number(r.timestamp);
      if (Number.isFinite(ms) && (!oldest || ms < oldest.ms)) oldest = { offset: r.offset, ms };
    }
  } catch (e) {
    if (e instanceof NullHeader)
      throw new BrokerError("bad_request", {
        userMessage: `Record ${e.offset} of ${topic}/${partition} has a header "${e.header}" without value, which the console's Kafka client cannot write: the skip is refused, nothing was copied.`,
      });
    signal?.throwIfAborted();
    throw deps.mapError(e, topic);
  }

  let dltCreated = false;
  let dltPartitions = await topicPartitionCount(deps, dlt);
  if (dltPartitions === null) {
    if (!req.createDlt)
      throw new BrokerError("not_found", {
        userMessage: `The dead-letter topic "${dlt}" does not exist. Create it, or allow the console to create it.`,
      });
    try {
      dltCreated = await deps.admin.createTopics({
        waitForLeaders: false,
        topics: [{ topic: dlt, numPartitions: range.partitions }],
      });
    } catch (e) {
      if (errorType(e) !== "TOPIC_ALREADY_EXISTS") throw deps.mapError(e, dlt);
    }
    const ready = await topicHasLeaders(deps.admin, dlt, range.partitions, 10_000).catch((e: unknown) =>
      Promise.reject(deps.mapError(e, dlt)),
    );
    dltPartitions = ready ? await topicPartitionCount(deps, dlt) : null;
    if (dltPartitions === null)
      throw new BrokerError("unreachable", {
        userMessage: `The dead-letter topic "${dlt}" was created but is not ready yet. Try again in a moment.`,
      });
  }
  if (oldest) await assertRetentionKeeps(deps, dlt, topic, partition, oldest);
  const dltPartition = partition < dltPartitions ? partition : partition % dltPartitions;

  const copies: SkipCopy[] = [];
  try {
    for await (const r of records()) {
      signal?.throwIfAborted();
      const message = { ...dltCopyOf(r, { topic, partition, groupId, reason }), partition: dltPartition };
      const at = await deps.produce(dlt, message);
      copies.push({ offset: BigInt(r.offset), dltPartition: at.partition, dltOffset: BigInt(at.offset) });
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    const mapped = deps.mapError(e, dlt);
    throw new BrokerError(mapped.kind, {
      message: mapped.message,
      cause: e,
      userMessage: `${mapped.userMessage} The committed offset was not changed.${copies.length ? ` ${copiesNote(copies)}` : ""}`,
      details: { copies: copies.map(copyDetail) },
    });
  }
  if (copies.length !== count) {
    throw new BrokerError("protocol", {
      userMessage: `${count} records were to be copied from ${topic}/${partition}, ${copies.length} were read the second time: the committed offset was not changed. Look at the partition again.`,
      details: { copies: copies.map(copyDetail) },
    });
  }

  // Right before the offset moves: still no member, still the same committed offset.
  await assertUnchanged(deps, req, copies);
  const next = last + 1n;
  try {
    const broker = (await (
      deps.cluster as unknown as { findGroupCoordinator(a: { groupId: string }): Promise<CommitBroker> }
    ).findGroupCoordinator({ groupId })) as CommitBroker;
    if (typeof broker.offsetCommit !== "function")
      throw new Error("kafkajs Broker.offsetCommit missing (kafkajs upgraded?)");
    await broker.offsetCommit({
      groupId,
      groupGenerationId: -1,
      memberId: "",
      topics: [{ topic, partitions: [{ partition, offset: next.toString() }] }],
    });
  } catch (e) {
    const type = errorType(e);
    if (type === "UNKNOWN_MEMBER_ID" || type === "ILLEGAL_GENERATION" || type === "REBALANCE_IN_PROGRESS") {
      throw new ConsumerGroupActiveError(groupId, await membersOf(deps, groupId).catch(() => []), { copies });
    }
    const mapped = deps.mapError(e, topic);
    throw new BrokerError(mapped.kind, {
      message: mapped.message,
      cause: e,
      userMessage: `${mapped.userMessage} The committed offset may not have changed. ${copiesNote(copies)}`,
      details: { copies: copies.map(copyDetail) },
    });
  }
  const committedAfter = await committedOf(deps, groupId, topic, partition);
  if (committedAfter !== next) {
    throw new BrokerError("protocol", {
      userMessage: `Kafka accepted the new committed offset ${next} for group "${groupId}" on ${topic}/${partition}, but now reports ${committedAfter ?? "none"}. Look at the group again.`,
      details: { copies: copies.map(copyDetail) },
    });
  }
  return { groupId, topic, partition, dlt, dltCreated, committedBefore, committedAfter: next, copies };
}
