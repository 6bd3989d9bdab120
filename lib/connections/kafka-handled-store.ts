import "server-only";
import { Prisma, type PrismaClient } from "@/lib/generated/prisma/client";
import { getDb } from "@/lib/db";
import {
  keyOf,
  refKey,
  type HandledMark,
  type HandledOutcome,
  type HandledStore,
  type TopicRef,
} from "@/lib/brokers/kafka/handled-store";

/**
 * The Kafka adapter's handled-offset store in the console's database (table kafka_handled_offsets).
 * The registry hands it to each Kafka adapter, so the broker boundary itself never reaches the
 * database; the store's contract (topic ids, legacy rows) is in lib/brokers/kafka/handled-store.ts.
 */
export function prismaHandledStore(db: () => PrismaClient = getDb): HandledStore {
  /** Rows a per-record lookup considers: the current id, plus legacy rows when the topic has an id. */
  const candidates = (t: TopicRef) => {
    const { topic, topicId } = keyOf(t);
    return { topic, topicId, ids: topicId ? [topicId, ""] : [""] };
  };
  /** One mark per record: a row of the current id wins over a legacy one. */
  const collect = (
    out: Map<string, HandledMark>,
    topicId: string,
    rows: Array<{
      partition: number;
      offset: bigint;
      handledAt: Date;
      outcome: HandledOutcome;
      operationId: string;
      topicId: string;
    }>,
  ) => {
    for (const r of rows) {
      const key = refKey(r.partition, r.offset);
      const legacy = topicId !== "" && r.topicId === "";
      if (legacy && out.has(key)) continue;
      out.set(key, {
        at: r.handledAt,
        outcome: r.outcome,
        operationId: r.operationId,
        ...(legacy ? { legacy: true } : {}),
      });
    }
    return out;
  };

  return {
    async markHandled(connectionId, t, refs, mark) {
      if (!refs.length) return 0;
      const { topic, topicId } = keyOf(t);
      const res = await db().kafkaHandledOffset.createMany({
        data: refs.map((r) => ({
          connectionId,
          topic,
          topicId,
          partition: r.partition,
          offset: r.offset,
          operationId: mark.operationId,
          outcome: mark.outcome,
          handledAt: mark.at ?? new Date(),
        })),
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
        where: {
          connectionId,
          topic,
          topicId: { in: ids },
          OR: [...byPartition].map(([partition, offsets]) => ({ partition, offset: { in: offsets } })),
        },
        select: { partition: true, offset: true, handledAt: true, outcome: true, operationId: true, topicId: true },
        orderBy: { topicId: "desc" },
      });
      return collect(out, topicId, rows);
    },

    async clearDiscarded(connectionId, t, ref, operationId) {
      // Callers have checked the record's bytes against the discard's archive: a legacy mark is its mark.
      const { topic, ids } = candidates(t);
      const res = await db().kafkaHandledOffset.deleteMany({
        where: {
          connectionId,
          topic,
          topicId: { in: ids },
          partition: ref.partition,
          offset: ref.offset,
          outcome: "discarded",
          ...(operationId ? { operationId } : {}),
        },
      });
      return res.count;
    },

    async handledBetween(connectionId, t, partition, from, to) {
      const out = new Map<string, HandledMark>();
      if (to < from) return out;
      const { topic, topicId, ids } = candidates(t);
      const rows = await db().$queryRaw<
        Array<{ offset: bigint; handled_at: Date; outcome: HandledOutcome; operation_id: string; topic_id: string }>
      >`
        select "offset", handled_at, outcome::text as outcome, operation_id::text as operation_id, topic_id from kafka_handled_offsets
        where connection_id = ${connectionId} and topic = ${topic} and topic_id = any(${ids}) and partition = ${partition} and "offset" between ${from} and ${to}
        order by topic_id desc`;
      return collect(
        out,
        topicId,
        rows.map((r) => ({
          partition,
          offset: r.offset,
          handledAt: r.handled_at,
          outcome: r.outcome,
          operationId: r.operation_id,
          topicId: r.topic_id,
        })),
      );
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
        where: {
          connectionId,
          topic,
          topicId,
          OR: live.map((r) => ({ partition: r.partition, offset: { gte: r.start, lt: r.end } })),
        },
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
      const values = Prisma.join(
        live.map((r) => Prisma.sql`(${r.partition}::int, ${r.start}::bigint, ${r.end}::bigint)`),
      );
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
