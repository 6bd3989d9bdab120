import "server-only";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { BrokerInspection, ConfigFinding } from "@/lib/brokers/contract/inspection";
import { loadConfig } from "@/lib/config";
import { listAdapters } from "@/lib/connections/registry";
import { getDb } from "@/lib/db";
import { asAppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { withTimeout } from "@/lib/use-case/connection";
import { noOwnerFinding, reconcileFindings } from "./findings";
import { ownerResolver } from "./owners";
import { writeSamples, type SampleInput } from "./samples";
import { figuresOf, type PreviousStatus, type ScanOldest } from "./vitals";

/** A broker that takes longer than this for one look is reported down for the round. */
const INSPECT_TIMEOUT_MS = 25_000;

export interface RoundReport {
  at: Date;
  connections: Array<{
    connectionId: string;
    ok: boolean;
    dlqs: number;
    findings: number;
    calls: number;
    ms: number;
    error: string | null;
  }>;
}

export interface RoundOptions {
  adapters?: BrokerAdapter[];
  db?: PrismaClient;
  now?: () => Date;
}

/**
 * One sampling round (the "operations-sampler" maintenance task, one replica at a time): one look
 * at every broker (`inspect`), then per connection the DLQs' status, their samples and the findings.
 * A broker that is down keeps its DLQs' last figures, marked with the error, and its findings as
 * they were (a fault cannot be seen fixed on a broker that does not answer).
 */
export async function sampleRound(opts: RoundOptions = {}): Promise<RoundReport> {
  const db = opts.db ?? getDb();
  const adapters = opts.adapters ?? listAdapters();
  const cfg = loadConfig().operations;
  const minRetentionMs = cfg.kafkaMinRetentionDays * 86400_000;
  const ownerOf = await ownerResolver();
  const looks = await Promise.all(
    adapters.map(async (a) => {
      const started = Date.now();
      try {
        const look = await withTimeout(a.inspect({ minRetentionMs }), INSPECT_TIMEOUT_MS, `inspect ${a.connectionId}`);
        return { a, look, error: null, ms: Date.now() - started };
      } catch (e) {
        const err = asAppError(e);
        if (!err)
          console.error(`[operations] inspecting ${a.connectionId} failed:`, e instanceof Error ? e.message : e);
        return {
          a,
          look: null,
          error: err?.userMessage ?? "The broker could not be inspected; the error was logged.",
          ms: Date.now() - started,
        };
      }
    }),
  );
  const at = (opts.now ?? (() => new Date()))();
  const report: RoundReport = { at, connections: [] };
  for (const { a, look, error, ms } of looks) {
    if (!look) {
      await db.$executeRawUnsafe(`UPDATE dlq_status SET error = $2 WHERE connection_id = $1`, a.connectionId, error);
      report.connections.push({ connectionId: a.connectionId, ok: false, dlqs: 0, findings: 0, calls: 0, ms, error });
      continue;
    }
    const findings: ConfigFinding[] = [
      ...look.findings,
      ...look.dlqs.filter((d) => !ownerOf(a.connectionId, d.name)).map((d) => noOwnerFinding(d.name)),
    ];
    await recordConnection(db, a.connectionId, look, at);
    await reconcileFindings(a.connectionId, findings, at, db);
    report.connections.push({
      connectionId: a.connectionId,
      ok: true,
      dlqs: look.dlqs.length,
      findings: findings.length,
      calls: look.calls,
      ms,
      error: null,
    });
  }
  return report;
}

async function recordConnection(
  db: PrismaClient,
  connectionId: string,
  look: BrokerInspection,
  at: Date,
): Promise<void> {
  const names = look.dlqs.map((d) => d.name);
  const prevRows = await db.dlqStatus.findMany({
    where: { connectionId, queue: { in: names } },
    select: {
      queue: true,
      depth: true,
      enteredTotal: true,
      sampledAt: true,
      oldestAt: true,
      oldestSource: true,
      oldestAsOf: true,
    },
  });
  const prev = new Map<string, PreviousStatus>(
    prevRows.map((r) => [r.queue, { depth: r.depth, enteredTotal: r.enteredTotal, sampledAt: r.sampledAt }]),
  );
  const known = new Map(
    prevRows
      .filter((r) => r.oldestSource === "scan" && r.oldestAsOf)
      .map((r) => [r.queue, { oldestAt: r.oldestAt, asOf: r.oldestAsOf! }]),
  );
  const needScan = look.dlqs.filter((d) => !d.oldestAt && d.depth !== 0).map((d) => d.name);
  const scans = await scanOldest(db, connectionId, needScan, known);
  const rows: Array<
    SampleInput & {
      queueType: string;
      inFlight: number | null;
      enteredTotal: bigint | null;
      oldestSource: string | null;
      oldestAsOf: Date | null;
      retentionMs: number | null;
    }
  > = [];
  for (const d of look.dlqs) {
    const f = figuresOf(d, prev.get(d.name) ?? null, scans.get(d.name) ?? null);
    rows.push({
      connectionId,
      queue: d.name,
      queueType: d.queueType,
      depth: f.depth,
      inFlight: d.inFlight,
      inflow: f.inflow,
      enteredTotal: f.enteredTotal,
      oldestAt: f.oldestAt,
      oldestSource: f.oldestSource,
      oldestAsOf: f.oldestAsOf,
      retentionMs: f.retentionMs,
      deadlineAt: f.deadlineAt,
    });
  }
  await writeSamples(at, rows, db);
  await db.$executeRawUnsafe(
    `INSERT INTO dlq_status (connection_id, queue, queue_type, sampled_at, depth, in_flight, inflow_per_min, entered_total, oldest_at, oldest_source,
                             oldest_as_of, retention_ms, deadline_at, error, missing_since, trend)
     SELECT $1, r.queue, r.queue_type, $2::timestamptz, r.depth, r.in_flight, h.inflow, r.entered_total::bigint, r.oldest_at, r.oldest_source,
            r.oldest_as_of, r.retention_ms::bigint, r.deadline_at, NULL, NULL, h.trend
       FROM json_to_recordset($3::json) AS r(queue text, queue_type text, depth int, in_flight int, entered_total text, oldest_at timestamptz,
                                              oldest_source text, oldest_as_of timestamptz, retention_ms text, deadline_at timestamptz)
       -- The last hour of 60 s buckets (primary key range): inflow per minute and the depth trend.
       CROSS JOIN LATERAL (
         SELECT sum(s.inflow)::float8 / 60 AS inflow,
                COALESCE(jsonb_agg(jsonb_build_object('t', extract(epoch FROM s.bucket_at)::bigint, 'd', s.depth) ORDER BY s.bucket_at), '[]'::jsonb) AS trend
           FROM dlq_samples s
          WHERE s.connection_id = $1 AND s.queue = r.queue AND s.resolution = 60 AND s.bucket_at > $2::timestamptz - interval '1 hour'
       ) h
     ON CONFLICT (connection_id, queue) DO UPDATE SET
       queue_type = EXCLUDED.queue_type, sampled_at = EXCLUDED.sampled_at, depth = EXCLUDED.depth, in_flight = EXCLUDED.in_flight, inflow_per_min = EXCLUDED.inflow_per_min,
       entered_total = EXCLUDED.entered_total, oldest_at = EXCLUDED.oldest_at, oldest_source = EXCLUDED.oldest_source,
       oldest_as_of = EXCLUDED.oldest_as_of, retention_ms = EXCLUDED.retention_ms, deadline_at = EXCLUDED.deadline_at,
       error = NULL, missing_since = NULL, trend = EXCLUDED.trend`,
    connectionId,
    at.toISOString(),
    JSON.stringify(
      rows.map((r) => ({
        queue: r.queue,
        queue_type: r.queueType,
        depth: r.depth,
        in_flight: r.inFlight,
        entered_total: r.enteredTotal?.toString() ?? null,
        oldest_at: r.oldestAt?.toISOString() ?? null,
        oldest_source: r.oldestSource,
        oldest_as_of: r.oldestAsOf?.toISOString() ?? null,
        retention_ms: r.retentionMs === null ? null : String(Math.round(r.retentionMs)),
        deadline_at: r.deadlineAt?.toISOString() ?? null,
      })),
    ),
  );
  // DLQs the broker no longer lists (deleted, or no longer dead-lettered into) stay for their history.
  await db.$executeRawUnsafe(
    `UPDATE dlq_status SET missing_since = COALESCE(missing_since, $2::timestamptz)
      WHERE connection_id = $1 AND NOT (queue = ANY($3::text[]))`,
    connectionId,
    at.toISOString(),
    names,
  );
}

/**
 * The oldest letter of each DLQ as its last finished scan indexed it: where the broker's retention
 * clock started (SQS SentTimestamp) or else when it was dead-lettered or first seen. Worked out
 * again only for DLQs scanned since the figure was last taken, so a round costs one small query
 * on the jobs table, plus one over the index only after a scan.
 */
async function scanOldest(
  db: PrismaClient,
  connectionId: string,
  queues: string[],
  known: Map<string, ScanOldest>,
): Promise<Map<string, ScanOldest>> {
  const out = new Map<string, ScanOldest>();
  if (queues.length === 0) return out;
  const scans = await db.$queryRawUnsafe<Array<{ queue: string; finished: Date }>>(
    `SELECT queue, max(finished_at) AS finished FROM jobs
      WHERE kind = 'scan' AND state = 'succeeded' AND connection_id = $1 AND queue = ANY($2::text[])
      GROUP BY queue`,
    connectionId,
    queues,
  );
  const stale: string[] = [];
  const finished = new Map<string, Date>();
  for (const s of scans) {
    const k = known.get(s.queue);
    finished.set(s.queue, s.finished);
    if (k && k.asOf.getTime() >= s.finished.getTime()) out.set(s.queue, k);
    else stale.push(s.queue);
  }
  if (stale.length === 0) return out;
  const rows = await db.$queryRawUnsafe<Array<{ queue: string; oldest: Date | null }>>(
    `SELECT queue, min(COALESCE(retention_from, arrived_at)) AS oldest
       FROM triage_letters
      WHERE connection_id = $1 AND queue = ANY($2::text[]) AND gone_at IS NULL
      GROUP BY queue`,
    connectionId,
    stale,
  );
  const oldest = new Map(rows.map((r) => [r.queue, r.oldest]));
  for (const q of stale) out.set(q, { oldestAt: oldest.get(q) ?? null, asOf: finished.get(q)! });
  return out;
}
