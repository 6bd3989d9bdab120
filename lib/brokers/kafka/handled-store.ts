import "server-only";
import { Prisma, type PrismaClient } from "@/lib/generated/prisma/client";
import { getDb } from "@/lib/db";

/**
 * The console's own record of Kafka offsets it has redriven or discarded (Kafka cannot delete one
 * record). Every function takes whole pages or partitions at once: one query, never one per letter.
 *
 * Rows are keyed by topic name AND topic id: a topic deleted and created again under the same name
 * has a new id and starts its offsets over, and its letters must not show the old topic's marks.
 * Where the broker keeps no ids (before Kafka 2.8), the id is "" and rows match by name, as before.
 * Rows written before ids were kept also have "" ("legacy"): for a topic that has an id they are
 * returned by the per-record lookups flagged `legacy`, and count only for a record no younger than
 * the mark (`markApplies`: a record written after the mark cannot be the one it was made for); a
 * verified legacy row is given the id (`adoptLegacy`). Counts use rows of the current id only, so a
 * legacy row never hides a letter it was not made for.
 */
export type HandledOutcome = "redriven" | "discarded";

/** A topic as the store keys it. A bare name means "id unknown" (""). */
export type TopicRef = string | { name: string; id: string | null };

const keyOf = (t: TopicRef) => (typeof t === "string" ? { topic: t, topicId: "" } : { topic: t.name, topicId: t.id ?? "" });

export interface RecordRef {
  partition: number;
  offset: bigint;
}

export interface HandledMark {
  at: Date;
  outcome: HandledOutcome;
  operationId: string;
  /** Written before topic ids were kept: applies only where `markApplies` says so. */
  legacy?: boolean;
}

/**
 * Whether a mark found for a record counts for it. A mark of the current topic id always does; a
 * legacy one only when the record's timestamp (ms) is not later than the mark, else the record
 * came after the mark (a recreated topic) and is shown as not handled: the safe side, since a
 * letter wrongly shown handled would never be redriven, while one wrongly shown waiting can at
 * worst be redriven twice (duplicates are tagged).
 */
export function markApplies(mark: HandledMark | undefined, recordTimestamp: string | number): mark is HandledMark {
  if (!mark) return false;
  if (!mark.legacy) return true;
  const ts = Number(recordTimestamp);
  return Number.isFinite(ts) && ts >= 0 && ts <= mark.at.getTime();
}

export interface PartitionRange {
  partition: number;
  start: bigint;
  end: bigint;
}

export interface HandledStore {
  markHandled(connectionId: string, topic: TopicRef, refs: RecordRef[], mark: { operationId: string; outcome: HandledOutcome; at?: Date }): Promise<number>;
  /** Marks for the given records (a page), keyed `partition-offset`. */
  handledAmong(connectionId: string, topic: TopicRef, refs: RecordRef[]): Promise<Map<string, HandledMark>>;
  /**
   * Marks of one partition's handled offsets in [from, to], keyed `partition-offset`: one indexed
   * range query (the unique index leads with connection, topic, partition, offset). Optional for
   * other stores: `handledAmong` is used where it is missing.
   */
  handledBetween?(connectionId: string, topic: TopicRef, partition: number, from: bigint, to: bigint): Promise<Map<string, HandledMark>>;
  /**
   * Undo of a discard: deletes the "discarded" mark of one record (only one made by `operationId`
   * when given). Returns the rows deleted. Optional for other stores: republish then re-produces.
   */
  clearDiscarded?(connectionId: string, topic: TopicRef, ref: RecordRef, operationId?: string): Promise<number>;
  /**
   * Gives legacy marks of these records (verified with `markApplies`) the topic's id, so that
   * counts include them from then on. Optional; a no-op for a bare name or a topic without id.
   */
  adoptLegacy?(connectionId: string, topic: TopicRef, refs: RecordRef[]): Promise<number>;
  /** Handled records inside each partition's [start, end) (rows of the topic's current id only). */
  handledCounts(connectionId: string, topic: TopicRef, ranges: PartitionRange[]): Promise<Map<number, number>>;
  /** First offset in [start, end) not handled, per partition (end when all are). */
  firstUnhandled(connectionId: string, topic: TopicRef, ranges: PartitionRange[]): Promise<Map<number, bigint>>;
}

export const refKey = (partition: number, offset: bigint | string) => `${partition}-${offset.toString()}`;

export function prismaHandledStore(db: () => PrismaClient = getDb): HandledStore {
  /** Rows a per-record lookup considers: the current id, plus legacy rows when the topic has an id. */
  const candidates = (t: TopicRef) => {
    const { topic, topicId } = keyOf(t);
    return { topic, topicId, ids: topicId ? [topicId, ""] : [""] };
  };
  /** One mark per record: a row of the current id wins over a legacy one. */
  const collect = (out: Map<string, HandledMark>, topicId: string, rows: Array<{ partition: number; offset: bigint; handledAt: Date; outcome: HandledOutcome; operationId: string; topicId: string }>) => {
    for (const r of rows) {
      const key = refKey(r.partition, r.offset);
      const legacy = topicId !== "" && r.topicId === "";
      if (legacy && out.has(key)) continue;
      out.set(key, { at: r.handledAt, outcome: r.outcome, operationId: r.operationId, ...(legacy ? { legacy: true } : {}) });
    }
    return out;
  };

  return {
    async markHandled(connectionId, t, refs, mark) {
      if (!refs.length) return 0;
      const { topic, topicId } = keyOf(t);
      const res = await db().kafkaHandledOffset.createMany({
        data: refs.map((r) => ({ connectionId, topic, topicId, partition: r.partition, offset: r.offset, operationId: mark.operationId, outcome: mark.outcome, handledAt: mark.at ?? new Date() })),
        // A record handled twice keeps its first mark: the first decision is the one that happened.
        skipDuplicates: true,
      });
      return res.count;
    },

    async handledAmong(connectionId, t, refs) {
      const out = new Map<string, HandledMark>();
      if (!refs.length) return out;
      const { topic, topicId, ids } = candidates(t);
      const byPartition = new Map<number, bigint[]>();
      for (const r of refs) byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r.offset]);
      const rows = await db().kafkaHandledOffset.findMany({
        where: { connectionId, topic, topicId: { in: ids }, OR: [...byPartition].map(([partition, offsets]) => ({ partition, offset: { in: offsets } })) },
        select: { partition: true, offset: true, handledAt: true, outcome: true, operationId: true, topicId: true },
        orderBy: { topicId: "desc" },
      });
      return collect(out, topicId, rows);
    },

    async clearDiscarded(connectionId, t, ref, operationId) {
      // Callers have checked the record's bytes against the discard's archive: a legacy mark is its mark.
      const { topic, ids } = candidates(t);
      const res = await db().kafkaHandledOffset.deleteMany({
        where: { connectionId, topic, topicId: { in: ids }, partition: ref.partition, offset: ref.offset, outcome: "discarded", ...(operationId ? { operationId } : {}) },
      });
      return res.count;
    },

    async handledBetween(connectionId, t, partition, from, to) {
      const out = new Map<string, HandledMark>();
      if (to < from) return out;
      const { topic, topicId, ids } = candidates(t);
      const rows = await db().$queryRaw<Array<{ offset: bigint; handled_at: Date; outcome: HandledOutcome; operation_id: string; topic_id: string }>>`
        select "offset", handled_at, outcome::text as outcome, operation_id::text as operation_id, topic_id from kafka_handled_offsets
        where connection_id = ${connectionId} and topic = ${topic} and topic_id = any(${ids}) and partition = ${partition} and "offset" between ${from} and ${to}
        order by topic_id desc`;
      return collect(out, topicId, rows.map((r) => ({ partition, offset: r.offset, handledAt: r.handled_at, outcome: r.outcome, operationId: r.operation_id, topicId: r.topic_id })));
    },

    async adoptLegacy(connectionId, t, refs) {
      const { topic, topicId } = keyOf(t);
      if (!topicId || !refs.length) return 0;
      const values = Prisma.join(refs.map((r) => Prisma.sql`(${r.partition}::int, ${r.offset}::bigint)`));
      return db().$executeRaw`
        update kafka_handled_offsets h set topic_id = ${topicId}
        from (values ${values}) as v(partition, "offset")
        where h.connection_id = ${connectionId} and h.topic = ${topic} and h.topic_id = '' and h.partition = v.partition and h."offset" = v."offset"
          and not exists (
            select 1 from kafka_handled_offsets n
            where n.connection_id = h.connection_id and n.topic = h.topic and n.topic_id = ${topicId} and n.partition = h.partition and n."offset" = h."offset"
          )`;
    },

    async handledCounts(connectionId, t, ranges) {
      const out = new Map<number, number>(ranges.map((r) => [r.partition, 0]));
      const live = ranges.filter((r) => r.end > r.start);
      if (!live.length) return out;
      const { topic, topicId } = keyOf(t);
      const rows = await db().kafkaHandledOffset.groupBy({
        by: ["partition"],
        where: { connectionId, topic, topicId, OR: live.map((r) => ({ partition: r.partition, offset: { gte: r.start, lt: r.end } })) },
        _count: { _all: true },
      });
      for (const r of rows) out.set(r.partition, r._count._all);
      return out;
    },

    async firstUnhandled(connectionId, t, ranges) {
      const out = new Map<number, bigint>(ranges.map((r) => [r.partition, r.start]));
      const live = ranges.filter((r) => r.end > r.start);
      if (!live.length) return out;
      const { topic, topicId } = keyOf(t);
      // Per partition: `start` when it is not handled, else the first handled offset whose successor is not.
      const values = Prisma.join(live.map((r) => Prisma.sql`(${r.partition}::int, ${r.start}::bigint, ${r.end}::bigint)`));
      const rows = await db().$queryRaw<Array<{ partition: number; first: bigint }>>`
        with r(partition, start_offset, end_offset) as (values ${values})
        select r.partition,
          case when not exists (
            select 1 from kafka_handled_offsets h
            where h.connection_id = ${connectionId} and h.topic = ${topic} and h.topic_id = ${topicId} and h.partition = r.partition and h."offset" = r.start_offset
          ) then r.start_offset
          else least(r.end_offset, (
            select min(h."offset") + 1 from kafka_handled_offsets h
            where h.connection_id = ${connectionId} and h.topic = ${topic} and h.topic_id = ${topicId} and h.partition = r.partition
              and h."offset" >= r.start_offset and h."offset" < r.end_offset
              and not exists (
                select 1 from kafka_handled_offsets n
                where n.connection_id = h.connection_id and n.topic = h.topic and n.topic_id = h.topic_id and n.partition = h.partition and n."offset" = h."offset" + 1
              )
          )) end as first
        from r`;
      for (const r of rows) out.set(Number(r.partition), BigInt(r.first));
      return out;
    },
  };
}
