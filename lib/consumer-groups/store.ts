import "server-only";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { stuckForMs } from "./stuck";

/**
 * Reading the consumer-group state the sampler (sampler.ts) keeps: one row per group and per
 * group partition as of the connection's last round. A partition is stuck when it has lag and its
 * committed offset has not moved since `since` for at least `stuckAfterMs`; `now` is passed in so
 * a page and its tests agree on the clock.
 */

export interface GroupMemberRow {
  memberId: string;
  clientId: string;
  host: string;
  assignments: Array<{ topic: string; partitions: number[] }>;
}

export interface GroupRow {
  connectionId: string;
  groupId: string;
  state: string;
  protocol: string | null;
  members: GroupMemberRow[];
  problem: string | null;
  sampledAt: Date;
  /** Partitions stored for the group (committed or assigned). */
  partitions: number;
  topics: string[];
  /** Sum of the partitions' lag. */
  lag: bigint;
  /** Partitions stuck at `now`. */
  stuck: number;
  /** Node id of the group's coordinator when it was sampled. */
  coordinator: number;
}

export interface PartitionRow {
  groupId: string;
  topic: string;
  partition: number;
  committed: bigint | null;
  start: bigint | null;
  end: bigint;
  lag: bigint;
  /** Client id and host of the member it is assigned to, if any. */
  member: string | null;
  /** When the current run of "same committed offset with lag" began; null without lag. */
  since: Date | null;
  sampledAt: Date;
  stuck: boolean;
  stuckForMs: number | null;
}

export interface StuckOptions {
  now: Date;
  stuckAfterMs: number;
}

type RawGroup = {
  connection_id: string;
  group_id: string;
  state: string;
  protocol: string | null;
  members: GroupMemberRow[] | string;
  problem: string | null;
  coordinator: number;
  sampled_at: Date;
  partitions: number;
  topics: string[] | null;
  lag: string;
  stuck: number;
};

type RawPartition = {
  group_id: string;
  topic: string;
  partition: number;
  committed: string | null;
  start_offset: string | null;
  end_offset: string;
  lag: string;
  member: string | null;
  since: Date | null;
  sampled_at: Date;
};

const big = (v: string | null) => (v === null ? null : BigInt(v));
const cutoff = (o: StuckOptions) => new Date(o.now.getTime() - o.stuckAfterMs).toISOString();

/** Groups with their partitions' aggregates, in one statement; `groupId` narrows it to one group. */
async function queryGroups(
  db: PrismaClient,
  connectionId: string,
  o: StuckOptions,
  groupId?: string,
): Promise<GroupRow[]> {
  const rows = await db.$queryRawUnsafe<RawGroup[]>(
    `SELECT g.connection_id, g.group_id, g.state, g.protocol, g.members, g.problem, g.coordinator, g.sampled_at,
            count(p.partition)::int AS partitions,
            array_remove(array_agg(DISTINCT p.topic), NULL) AS topics,
            COALESCE(sum(p.lag), 0)::text AS lag,
            (count(*) FILTER (WHERE p.lag > 0 AND p.since <= $2::timestamptz))::int AS stuck
       FROM consumer_group_status g
       LEFT JOIN consumer_group_partitions p ON p.connection_id = g.connection_id AND p.group_id = g.group_id
      WHERE g.connection_id = $1 AND ($3::text IS NULL OR g.group_id = $3::text)
      GROUP BY g.connection_id, g.group_id
      ORDER BY (count(*) FILTER (WHERE p.lag > 0 AND p.since <= $2::timestamptz)) > 0 DESC, COALESCE(sum(p.lag), 0) DESC, g.group_id`,
    connectionId,
    cutoff(o),
    groupId ?? null,
  );
  return rows.map((r) => ({
    connectionId: r.connection_id,
    groupId: r.group_id,
    state: r.state,
    protocol: r.protocol,
    members: typeof r.members === "string" ? (JSON.parse(r.members) as GroupMemberRow[]) : r.members,
    problem: r.problem,
    sampledAt: r.sampled_at,
    partitions: Number(r.partitions),
    topics: [...(r.topics ?? [])].sort(),
    lag: BigInt(r.lag),
    stuck: Number(r.stuck),
    coordinator: Number(r.coordinator),
  }));
}

function partitionOf(r: RawPartition, o: StuckOptions): PartitionRow {
  const lag = BigInt(r.lag);
  const forMs = stuckForMs({ lag, since: r.since }, o.now, o.stuckAfterMs);
  return {
    groupId: r.group_id,
    topic: r.topic,
    partition: Number(r.partition),
    committed: big(r.committed),
    start: big(r.start_offset),
    end: BigInt(r.end_offset),
    lag,
    member: r.member,
    since: r.since,
    sampledAt: r.sampled_at,
    stuck: forMs !== null,
    stuckForMs: forMs,
  };
}

const PARTITION_COLUMNS = `group_id, topic, partition, committed::text, start_offset::text, end_offset::text, lag::text, member, since, sampled_at`;

/** Every group of the connection as of its last round: stuck ones first, then by lag, then by id. */
export async function listGroupRows(
  connectionId: string,
  opts: StuckOptions,
  db: PrismaClient = getDb(),
): Promise<GroupRow[]> {
  return queryGroups(db, connectionId, opts);
}

/** One group and its partitions (by topic, then partition); null when the group is not stored. */
export async function groupDetail(
  connectionId: string,
  groupId: string,
  opts: StuckOptions,
  db: PrismaClient = getDb(),
): Promise<{ group: GroupRow; partitions: PartitionRow[] } | null> {
  const [group] = await queryGroups(db, connectionId, opts, groupId);
  if (!group) return null;
  const rows = await db.$queryRawUnsafe<RawPartition[]>(
    `SELECT ${PARTITION_COLUMNS} FROM consumer_group_partitions WHERE connection_id = $1 AND group_id = $2 ORDER BY topic, partition`,
    connectionId,
    groupId,
  );
  return { group, partitions: rows.map((r) => partitionOf(r, opts)) };
}

/** One partition of one group as of the last round; null when not stored. */
export async function partitionRow(
  connectionId: string,
  groupId: string,
  topic: string,
  partition: number,
  opts: StuckOptions,
  db: PrismaClient = getDb(),
): Promise<PartitionRow | null> {
  const [row] = await db.$queryRawUnsafe<RawPartition[]>(
    `SELECT ${PARTITION_COLUMNS} FROM consumer_group_partitions WHERE connection_id = $1 AND group_id = $2 AND topic = $3 AND partition = $4`,
    connectionId,
    groupId,
    topic,
    partition,
  );
  return row ? partitionOf(row, opts) : null;
}

/** The connection's last round: when, its error (operator words) when the broker could not be read, requests sent, groups stored. */
export async function roundOf(
  connectionId: string,
  db: PrismaClient = getDb(),
): Promise<{ sampledAt: Date; error: string | null; calls: number; groups: number } | null> {
  return db.consumerGroupRound.findUnique({
    where: { connectionId },
    select: { sampledAt: true, error: true, calls: true, groups: true },
  });
}

/**
 * A skip moved the group's committed offset: the stored partition takes it at once (lag against the
 * stored end, a new run of "same offset" from now), so lists do not call it stuck on the offset it
 * left until the next round samples it.
 */
export async function recordCommittedMove(
  connectionId: string,
  groupId: string,
  topic: string,
  partition: number,
  committed: bigint,
  db: PrismaClient = getDb(),
): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE consumer_group_partitions
        SET committed = $5::bigint,
            lag = GREATEST(end_offset - $5::bigint, 0),
            since = CASE WHEN end_offset > $5::bigint THEN now() ELSE NULL END
      WHERE connection_id = $1 AND group_id = $2 AND topic = $3 AND partition = $4`,
    connectionId,
    groupId,
    topic,
    partition,
    committed.toString(),
  );
}
