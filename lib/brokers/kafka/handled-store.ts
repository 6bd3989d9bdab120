import "server-only";
import { Prisma, type PrismaClient } from "@/lib/generated/prisma/client";
import { getDb } from "@/lib/db";

/**
 * The console's own record of Kafka offsets it has redriven or discarded (Kafka cannot delete one
 * record). Every function takes whole pages or partitions at once: one query, never one per letter.
 */
export type HandledOutcome = "redriven" | "discarded";

export interface RecordRef {
  partition: number;
  offset: bigint;
}

export interface HandledMark {
  at: Date;
  outcome: HandledOutcome;
  operationId: string;
}

export interface PartitionRange {
  partition: number;
  start: bigint;
  end: bigint;
}

export interface HandledStore {
  markHandled(connectionId: string, topic: string, refs: RecordRef[], mark: { operationId: string; outcome: HandledOutcome; at?: Date }): Promise<number>;
  /** Marks for the given records (a page), keyed `partition-offset`. */
  handledAmong(connectionId: string, topic: string, refs: RecordRef[]): Promise<Map<string, HandledMark>>;
  /**
   * Marks of one partition's handled offsets in [from, to], keyed `partition-offset`: one indexed
   * range query (the unique index leads with connection, topic, partition, offset). Optional for
   * other stores: `handledAmong` is used where it is missing.
   */
  handledBetween?(connectionId: string, topic: string, partition: number, from: bigint, to: bigint): Promise<Map<string, HandledMark>>;
  /**
   * Undo of a discard: deletes the "discarded" mark of one record (only one made by `operationId`
   * when given). Returns the rows deleted. Optional for other stores: republish then re-produces.
   */
  clearDiscarded?(connectionId: string, topic: string, ref: RecordRef, operationId?: string): Promise<number>;
  /** Handled records inside each partition's [start, end). */
  handledCounts(connectionId: string, topic: string, ranges: PartitionRange[]): Promise<Map<number, number>>;
  /** First offset in [start, end) not handled, per partition (end when all are). */
  firstUnhandled(connectionId: string, topic: string, ranges: PartitionRange[]): Promise<Map<number, bigint>>;
}

export const refKey = (partition: number, offset: bigint | string) => `${partition}-${offset.toString()}`;

export function prismaHandledStore(db: () => PrismaClient = getDb): HandledStore {
  return {
    async markHandled(connectionId, topic, refs, mark) {
      if (!refs.length) return 0;
      const res = await db().kafkaHandledOffset.createMany({
        data: refs.map((r) => ({ connectionId, topic, partition: r.partition, offset: r.offset, operationId: mark.operationId, outcome: mark.outcome, handledAt: mark.at ?? new Date() })),
        // A record handled twice keeps its first mark: the first decision is the one that happened.
        skipDuplicates: true,
      });
      return res.count;
    },

    async handledAmong(connectionId, topic, refs) {
      const out = new Map<string, HandledMark>();
      if (!refs.length) return out;
      const byPartition = new Map<number, bigint[]>();
      for (const r of refs) byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r.offset]);
      const rows = await db().kafkaHandledOffset.findMany({
        where: { connectionId, topic, OR: [...byPartition].map(([partition, offsets]) => ({ partition, offset: { in: offsets } })) },
        select: { partition: true, offset: true, handledAt: true, outcome: true, operationId: true },
      });
      for (const r of rows) out.set(refKey(r.partition, r.offset), { at: r.handledAt, outcome: r.outcome, operationId: r.operationId });
      return out;
    },

    async clearDiscarded(connectionId, topic, ref, operationId) {
      const res = await db().kafkaHandledOffset.deleteMany({
        where: { connectionId, topic, partition: ref.partition, offset: ref.offset, outcome: "discarded", ...(operationId ? { operationId } : {}) },
      });
      return res.count;
    },

    async handledBetween(connectionId, topic, partition, from, to) {
      const out = new Map<string, HandledMark>();
      if (to < from) return out;
      const rows = await db().$queryRaw<Array<{ offset: bigint; handled_at: Date; outcome: HandledOutcome; operation_id: string }>>`
        select "offset", handled_at, outcome::text as outcome, operation_id::text as operation_id from kafka_handled_offsets
        where connection_id = ${connectionId} and topic = ${topic} and partition = ${partition} and "offset" between ${from} and ${to}`;
      for (const r of rows) out.set(refKey(partition, r.offset), { at: r.handled_at, outcome: r.outcome, operationId: r.operation_id });
      return out;
    },

    async handledCounts(connectionId, topic, ranges) {
      const out = new Map<number, number>(ranges.map((r) => [r.partition, 0]));
      const live = ranges.filter((r) => r.end > r.start);
      if (!live.length) return out;
      const rows = await db().kafkaHandledOffset.groupBy({
        by: ["partition"],
        where: { connectionId, topic, OR: live.map((r) => ({ partition: r.partition, offset: { gte: r.start, lt: r.end } })) },
        _count: { _all: true },
      });
      for (const r of rows) out.set(r.partition, r._count._all);
      return out;
    },

    async firstUnhandled(connectionId, topic, ranges) {
      const out = new Map<number, bigint>(ranges.map((r) => [r.partition, r.start]));
      const live = ranges.filter((r) => r.end > r.start);
      if (!live.length) return out;
      // Per partition: `start` when it is not handled, else the first handled offset whose successor is not.
      const values = Prisma.join(live.map((r) => Prisma.sql`(${r.partition}::int, ${r.start}::bigint, ${r.end}::bigint)`));
      const rows = await db().$queryRaw<Array<{ partition: number; first: bigint }>>`
        with r(partition, start_offset, end_offset) as (values ${values})
        select r.partition,
          case when not exists (
            select 1 from kafka_handled_offsets h
            where h.connection_id = ${connectionId} and h.topic = ${topic} and h.partition = r.partition and h."offset" = r.start_offset
          ) then r.start_offset
          else least(r.end_offset, (
            select min(h."offset") + 1 from kafka_handled_offsets h
            where h.connection_id = ${connectionId} and h.topic = ${topic} and h.partition = r.partition
              and h."offset" >= r.start_offset and h."offset" < r.end_offset
              and not exists (
                select 1 from kafka_handled_offsets n
                where n.connection_id = h.connection_id and n.topic = h.topic and n.partition = h.partition and n."offset" = h."offset" + 1
              )
          )) end as first
        from r`;
      for (const r of rows) out.set(Number(r.partition), BigInt(r.first));
      return out;
    },
  };
}
