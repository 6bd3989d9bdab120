import "server-only";
import type { ConsumerGroupsRound } from "@/lib/brokers/contract/consumer-groups";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { consumerGroupsConfigOf, loadConfig } from "@/lib/config";
import { listAdapters } from "@/lib/connections/registry";
import { getDb } from "@/lib/db";
import { asAppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { globMatch } from "@/lib/glob";
import { withTimeout } from "@/lib/use-case/connection";
import { partitionKey, partitionWrites, stuckForMs, type PartitionWrite } from "./stuck";

/** A cluster that takes longer than this for one round is reported down for the round. */
const READ_TIMEOUT_MS = 25_000;

export interface GroupsRoundReport {
  at: Date;
  connections: Array<{
    connectionId: string;
    ok: boolean;
    groups: number;
    stuck: number;
    calls: number;
    error: string | null;
  }>;
}

export interface GroupsRoundOptions {
  adapters?: BrokerAdapter[];
  db?: PrismaClient;
  now?: () => Date;
}

/**
 * One consumer-group sampling round (the "consumer-groups-sampler" maintenance task, leased: one
 * replica at a time): one `consumerGroups.read()` per connection that samples its groups (a
 * constant number of admin requests per cluster), then per connection one transaction with a
 * constant number of statements whatever the number of groups: the groups and partitions stored
 * as of this round (one row each, no history), with each partition's `since` carried over while
 * its committed offset stays put with lag (stuck.ts). A connection whose read fails keeps its rows
 * as they were and records the error on its round row.
 */
export async function sampleConsumerGroups(opts: GroupsRoundOptions = {}): Promise<GroupsRoundReport> {
  const db = opts.db ?? getDb();
  const configs = new Map(
    loadConfig().connections.flatMap((c) => {
      const groups = consumerGroupsConfigOf(c);
      return groups?.sample ? [[c.id, groups] as const] : [];
    }),
  );
  const targets = (opts.adapters ?? listAdapters()).filter((a) => a.consumerGroups && configs.has(a.connectionId));
  const reads = await Promise.all(
    targets.map(async (a) => {
      const abort = new AbortController();
      try {
        const round = await withTimeout(
          a.consumerGroups!.read({ signal: abort.signal }),
          READ_TIMEOUT_MS,
          `consumer groups of ${a.connectionId}`,
        );
        return { a, round, error: null };
      } catch (e) {
        abort.abort();
        const err = asAppError(e);
        if (!err)
          console.error(`[consumer-groups] reading ${a.connectionId} failed:`, e instanceof Error ? e.message : e);
        return {
          a,
          round: null,
          error: err?.userMessage ?? "The consumer groups could not be read; the error was logged.",
        };
      }
    }),
  );
  const at = (opts.now ?? (() => new Date()))();
  const report: GroupsRoundReport = { at, connections: [] };
  for (const { a, round, error } of reads) {
    const cfg = configs.get(a.connectionId)!;
    if (!round) {
      await db.$executeRawUnsafe(
        `INSERT INTO consumer_group_rounds (connection_id, sampled_at, error, calls, groups) VALUES ($1, $2::timestamptz, $3, 0, 0)
         ON CONFLICT (connection_id) DO UPDATE SET sampled_at = EXCLUDED.sampled_at, error = EXCLUDED.error, calls = 0`,
        a.connectionId,
        at.toISOString(),
        error,
      );
      report.connections.push({ connectionId: a.connectionId, ok: false, groups: 0, stuck: 0, calls: 0, error });
      continue;
    }
    const groups = round.groups.filter((g) => !cfg.exclude.some((glob) => globMatch(glob, g.groupId)));
    const stuck = await recordRound(db, a.connectionId, { ...round, groups }, at, cfg.stuckAfterSeconds * 1000);
    report.connections.push({
      connectionId: a.connectionId,
      ok: true,
      groups: groups.length,
      stuck,
      calls: round.calls,
      error: null,
    });
  }
  return report;
}

/**
 * One connection's round in one transaction of six statements (a select, two upserts, two
 * deletes, the round row), whatever the number of groups. Returns how many partitions are stuck.
 */
async function recordRound(
  db: PrismaClient,
  connectionId: string,
  round: ConsumerGroupsRound,
  at: Date,
  stuckAfterMs: number,
): Promise<number> {
  const iso = at.toISOString();
  return db.$transaction(
    async (tx) => {
      const prevRows = await tx.$queryRawUnsafe<
        Array<{
          group_id: string;
          topic: string;
          partition: number;
          committed: string | null;
          lag: string;
          since: Date | null;
        }>
      >(
        `SELECT group_id, topic, partition, committed::text, lag::text, since FROM consumer_group_partitions WHERE connection_id = $1`,
        connectionId,
      );
      const prev = new Map(
        prevRows.map((r) => [
          partitionKey(r.group_id, r.topic, Number(r.partition)),
          { committed: r.committed === null ? null : BigInt(r.committed), lag: BigInt(r.lag), since: r.since },
        ]),
      );
      const writes: PartitionWrite[] = [];
      const keep: Array<{ group_id: string; topic: string; partition: number }> = [];
      for (const g of round.groups) {
        const w = partitionWrites(g, prev, at);
        writes.push(...w.writes);
        // A group with a problem keeps every partition row it had.
        if (g.problem === null) keep.push(...w.keep.map((k) => ({ group_id: g.groupId, ...k })));
      }
      const fullyRead = round.groups.filter((g) => g.problem === null).map((g) => g.groupId);

      await tx.$executeRawUnsafe(
        `INSERT INTO consumer_group_status (connection_id, group_id, state, protocol, members, problem, coordinator, sampled_at)
         SELECT $1, r.group_id, r.state, NULLIF(r.protocol, ''), r.members, r.problem, r.coordinator, $2::timestamptz
           FROM json_to_recordset($3::json) AS r(group_id text, state text, protocol text, members jsonb, problem text, coordinator int)
         ON CONFLICT (connection_id, group_id) DO UPDATE SET
           state = EXCLUDED.state, protocol = EXCLUDED.protocol, members = EXCLUDED.members, problem = EXCLUDED.problem,
           coordinator = EXCLUDED.coordinator, sampled_at = EXCLUDED.sampled_at`,
        connectionId,
        iso,
        JSON.stringify(
          round.groups.map((g) => ({
            group_id: g.groupId,
            state: g.state,
            protocol: g.protocol,
            members: g.members,
            problem: g.problem,
            coordinator: g.coordinator,
          })),
        ),
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO consumer_group_partitions (connection_id, group_id, topic, partition, committed, start_offset, end_offset, lag, member, since, sampled_at)
         SELECT $1, r.group_id, r.topic, r.partition, r.committed::bigint, r.start_offset::bigint, r.end_offset::bigint, r.lag::bigint, r.member, r.since, $2::timestamptz
           FROM json_to_recordset($3::json) AS r(group_id text, topic text, partition int, committed text, start_offset text, end_offset text, lag text, member text, since timestamptz)
         ON CONFLICT (connection_id, group_id, topic, partition) DO UPDATE SET
           committed = EXCLUDED.committed, start_offset = EXCLUDED.start_offset, end_offset = EXCLUDED.end_offset, lag = EXCLUDED.lag,
           member = EXCLUDED.member, since = EXCLUDED.since, sampled_at = EXCLUDED.sampled_at`,
        connectionId,
        iso,
        JSON.stringify(writes),
      );
      // Partitions a fully read group no longer has (its offsets deleted, or no longer assigned).
      await tx.$executeRawUnsafe(
        `DELETE FROM consumer_group_partitions p
          WHERE p.connection_id = $1 AND p.group_id = ANY($2::text[])
            AND NOT EXISTS (SELECT 1 FROM json_to_recordset($3::json) AS k(group_id text, topic text, partition int)
                             WHERE k.group_id = p.group_id AND k.topic = p.topic AND k.partition = p.partition)`,
        connectionId,
        fullyRead,
        JSON.stringify(keep),
      );
      // Groups gone (deleted, excluded, or no longer a consumer group), unless their coordinator did not list its groups this round.
      await tx.$executeRawUnsafe(
        `WITH gone AS (
           DELETE FROM consumer_group_status g
            WHERE g.connection_id = $1 AND NOT (g.group_id = ANY($2::text[])) AND NOT (g.coordinator = ANY($3::int[]))
            RETURNING g.group_id)
         DELETE FROM consumer_group_partitions p USING gone WHERE p.connection_id = $1 AND p.group_id = gone.group_id`,
        connectionId,
        round.groups.map((g) => g.groupId),
        round.brokersNotListed,
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO consumer_group_rounds (connection_id, sampled_at, error, calls, groups) VALUES ($1, $2::timestamptz, NULL, $3, $4)
         ON CONFLICT (connection_id) DO UPDATE SET sampled_at = EXCLUDED.sampled_at, error = NULL, calls = EXCLUDED.calls, groups = EXCLUDED.groups`,
        connectionId,
        iso,
        round.calls,
        round.groups.length,
      );
      return writes.filter(
        (w) =>
          stuckForMs({ lag: BigInt(w.lag), since: w.since === null ? null : new Date(w.since) }, at, stuckAfterMs) !==
          null,
      ).length;
    },
    { timeout: 60_000 },
  );
}
