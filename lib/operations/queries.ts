import "server-only";
import type { FindingSeverity } from "@/lib/brokers/contract/inspection";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { SEVERITY_RANK } from "./findings";
import type { DlqOwnerInfo, OwnerOf } from "./owners";

/** One DLQ as the overview shows it: its last sampled figures and what needs attention. */
export interface DlqOverviewRow {
  connectionId: string;
  queue: string;
  queueType: string;
  sampledAt: string;
  depth: number | null;
  /** Letters delivered and not settled at sampledAt; null where the broker has no such state (Kafka). */
  inFlight: number | null;
  /** Letters per minute over the last hour. */
  inflowPerMin: number | null;
  oldestAt: string | null;
  /** "broker": read at sampledAt; "scan": from the scan at oldestAsOf. */
  oldestSource: "broker" | "scan" | null;
  oldestAsOf: string | null;
  retentionMs: number | null;
  deadlineAt: string | null;
  /** The last round could not reach the broker: the figures are from the round before. */
  error: string | null;
  missingSince: string | null;
  owner: DlqOwnerInfo | null;
  openFindings: number;
  worstFinding: FindingSeverity | null;
  firingAlerts: number;
  /** When an alert for this DLQ last fired or resolved. */
  lastAlertAt: string | null;
  /** Depth per minute over the last hour, oldest first (null where no sample). */
  trend: Array<number | null>;
}

/**
 * Every sampled DLQ with its open findings, alerts and last hour's depth, in one query over the
 * small per-DLQ tables (the trend is kept in dlq_status by each round), never the samples.
 */
export async function overviewRows(
  ownerOf: OwnerOf,
  now = new Date(),
  db: PrismaClient = getDb(),
  only?: { connectionId: string; queue: string },
): Promise<DlqOverviewRow[]> {
  const rows = await db.$queryRawUnsafe<
    Array<{
      connection_id: string;
      queue: string;
      queue_type: string;
      sampled_at: Date;
      depth: number | null;
      in_flight: number | null;
      inflow_per_min: number | null;
      oldest_at: Date | null;
      oldest_source: string | null;
      oldest_as_of: Date | null;
      retention_ms: bigint | null;
      deadline_at: Date | null;
      error: string | null;
      missing_since: Date | null;
      open_findings: number;
      worst: number | null;
      firing: number;
      last_alert_at: Date | null;
      trend: Array<{ t: number; d: number | null }> | null;
    }>
  >(
    `WITH f AS (
       SELECT connection_id, queue, count(*)::int AS n,
              max(CASE severity WHEN 'critical' THEN 3 WHEN 'warning' THEN 2 ELSE 1 END)::int AS worst
         FROM dlq_findings
        WHERE resolved_at IS NULL AND queue IS NOT NULL AND ($1::text IS NULL OR (connection_id = $1 AND queue = $2))
        GROUP BY connection_id, queue
     ), a AS (
       SELECT connection_id, queue, count(*) FILTER (WHERE state = 'firing')::int AS firing, max(since) AS last_at
         FROM alert_states WHERE $1::text IS NULL OR (connection_id = $1 AND queue = $2) GROUP BY connection_id, queue
     )
     SELECT s.connection_id, s.queue, s.queue_type, s.sampled_at, s.depth, s.in_flight, s.inflow_per_min, s.oldest_at, s.oldest_source,
            s.oldest_as_of, s.retention_ms, s.deadline_at, s.error, s.missing_since,
            COALESCE(f.n, 0) AS open_findings, f.worst, COALESCE(a.firing, 0) AS firing, a.last_at AS last_alert_at, s.trend
       FROM dlq_status s
       LEFT JOIN f ON f.connection_id = s.connection_id AND f.queue = s.queue
       LEFT JOIN a ON a.connection_id = s.connection_id AND a.queue = s.queue
      WHERE $1::text IS NULL OR (s.connection_id = $1 AND s.queue = $2)`,
    only?.connectionId ?? null,
    only?.queue ?? null,
  );
  const worstName = (n: number | null): FindingSeverity | null =>
    n === 3 ? "critical" : n === 2 ? "warning" : n === 1 ? "info" : null;
  return rows.map((r) => {
    const trend: Array<number | null> = new Array(60).fill(null);
    const nowMinute = Math.floor(now.getTime() / 60_000);
    for (const p of r.trend ?? []) {
      const ago = nowMinute - Math.floor(Number(p.t) / 60);
      if (ago >= 0 && ago < 60) trend[59 - ago] = p.d;
    }
    return {
      connectionId: r.connection_id,
      queue: r.queue,
      queueType: r.queue_type,
      sampledAt: r.sampled_at.toISOString(),
      depth: r.depth,
      inFlight: r.in_flight,
      inflowPerMin: r.inflow_per_min === null ? null : Math.round(r.inflow_per_min * 100) / 100,
      oldestAt: r.oldest_at?.toISOString() ?? null,
      oldestSource: (r.oldest_source as DlqOverviewRow["oldestSource"]) ?? null,
      oldestAsOf: r.oldest_as_of?.toISOString() ?? null,
      retentionMs: r.retention_ms === null ? null : Number(r.retention_ms),
      deadlineAt: r.deadline_at?.toISOString() ?? null,
      error: r.error,
      missingSince: r.missing_since?.toISOString() ?? null,
      owner: ownerOf(r.connection_id, r.queue),
      openFindings: r.open_findings,
      worstFinding: worstName(r.worst),
      firingAlerts: r.firing,
      lastAlertAt: r.last_alert_at?.toISOString() ?? null,
      trend,
    };
  });
}

/**
 * How urgently a DLQ needs someone, for "needs attention first": letters about to be lost, then
 * firing alerts and critical findings, then letters arriving, then letters waiting. Pure.
 */
export function attentionScore(
  r: Pick<DlqOverviewRow, "deadlineAt" | "firingAlerts" | "worstFinding" | "inflowPerMin" | "depth" | "missingSince">,
  warnHours: number,
  now = Date.now(),
): number {
  if (r.missingSince) return 0;
  let score = 0;
  if (r.deadlineAt) {
    const left = new Date(r.deadlineAt).getTime() - now;
    if (left < warnHours * 3600_000) score += 1000 + Math.max(0, Math.round((warnHours * 3600_000 - left) / 60_000));
  }
  if (r.firingAlerts > 0) score += 400;
  if (r.worstFinding) score += SEVERITY_RANK[r.worstFinding] * 60;
  if ((r.inflowPerMin ?? 0) > 0) score += 50;
  if ((r.depth ?? 0) > 0) score += 10;
  return score;
}

/** Needs attention first; ties by the nearest deadline, then the deepest. */
export function byAttention(rows: DlqOverviewRow[], warnHours: number, now = Date.now()): DlqOverviewRow[] {
  const scored = rows.map((r) => ({ r, s: attentionScore(r, warnHours, now) }));
  scored.sort(
    (a, b) =>
      b.s - a.s ||
      (a.r.deadlineAt ? new Date(a.r.deadlineAt).getTime() : Infinity) -
        (b.r.deadlineAt ? new Date(b.r.deadlineAt).getTime() : Infinity) ||
      (b.r.depth ?? -1) - (a.r.depth ?? -1) ||
      a.r.queue.localeCompare(b.r.queue),
  );
  return scored.map((x) => x.r);
}
