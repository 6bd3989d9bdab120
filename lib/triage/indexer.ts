import "server-only";
import { randomUUID } from "node:crypto";
import { recordAudit, SYSTEM_ACTOR } from "@/lib/audit";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import type { TailPositions } from "@/lib/brokers/tail";
import type { IndexingConfig } from "@/lib/config";
import { keyring } from "@/lib/crypto/payload-cipher";
import { getDb } from "@/lib/db";
import { asAppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { isUniqueViolation, jobStore } from "@/lib/jobs/store";
import { holdTaskLease, releaseTaskLease } from "@/lib/jobs/task-lease";
import { maskingHashKey } from "@/lib/masking/key";
import { loadMaskingConfig } from "@/lib/masking/store";
import { PAYLOAD_CAP_BYTES, rowWeight, toIndexRow, type IndexRow } from "./index-row";
import { prepareLetters, refreshGroupSummary, writeLetters } from "./index-store";
import { indexingOff, rescanVerdict } from "./indexing-policy";
import { searchMaskingFor } from "./masked-search";
import { loadRules } from "./rules-store";

/**
 * The triage indexer: each round (the worker's "triage-indexer" task) keeps the groups of DLQs
 * current where reading costs nothing, without an operator's scan.
 *
 * - What is due comes from the operations sampler's figures (dlq_status: depth, letters entered,
 *   inflow): one query per round finds the DLQs whose figures changed since the indexer last acted,
 *   plus the tails still catching up. An idle DLQ costs nothing beyond that query.
 * - A DLQ whose adapter can read after a position (`BrokerAdapter.tail`: Kafka, Pulsar) is read
 *   from where its last round stopped, per partition (triage_index_state.positions): O(new letters).
 * - Any other DLQ (RabbitMQ classic, SQS) can only be read whole: a system scan job is queued, no
 *   more often than `intervalSeconds`, within the connection's letters-per-minute budget. The scan
 *   holds letters as any scan does, and only a DLQ no deeper than the budget is rescanned.
 * - A DLQ whose description carries a read risk is never read here: its groups come from the
 *   snapshots an operator confirms.
 * - One replica at a time per DLQ (a task lease named after it); rows are upserted by letter id, so
 *   even two readers of the same letters never count one twice.
 */

export interface IndexerDeps {
  adapters: () => BrokerAdapter[];
  config: () => IndexingConfig;
  db?: () => PrismaClient;
  /** Names this process in the per-DLQ leases. */
  owner: string;
  now?: () => Date;
  /** Letters per INSERT (default 500); a batch is also cut at ~8 MiB of payload. */
  batchSize?: number;
  batchBytes?: number;
  /** Groups of a DLQ are recomputed at most this often while letters keep coming (default 10 s). */
  summaryEverySeconds?: number;
  signal?: AbortSignal;
}

export interface IndexedDlq {
  connectionId: string;
  queue: string;
  outcome: string;
  letters: number;
  jobId?: string;
}

export interface IndexRoundReport {
  due: number;
  dlqs: IndexedDlq[];
}

interface DueRow {
  connection_id: string;
  queue: string;
  depth: number | null;
  entered_total: string | null;
  sampled_at: Date;
  /** The figures differ from those last acted on (or the DLQ was never looked at). */
  changed: boolean;
  has_state: boolean;
  positions: TailPositions | null;
  hot: boolean | null;
  summary_pending: boolean | null;
  summary_at: Date | null;
  rescan_job_id: string | null;
  rescan_at: Date | null;
  indexed_at: Date | null;
}

const LEASE_MS = 5 * 60_000;
const CHANGED = `(s.connection_id IS NULL OR d.depth IS DISTINCT FROM s.seen_depth OR d.entered_total IS DISTINCT FROM s.seen_entered)`;

/** One round over every connection's due DLQs. */
export async function indexRound(deps: IndexerDeps): Promise<IndexRoundReport> {
  const cfg = deps.config();
  const db = (deps.db ?? getDb)();
  const adapters = new Map(deps.adapters().map((a) => [a.connectionId, a]));
  if (!cfg.enabled || adapters.size === 0) return { due: 0, dlqs: [] };
  const due = await dueRows(db, [...adapters.keys()]);
  const report: IndexRoundReport = { due: due.length, dlqs: [] };
  for (const found of due) {
    if (deps.signal?.aborted) break;
    const a = adapters.get(found.connection_id);
    if (!a) continue;
    const lease = `triage-index:${found.connection_id}:${found.queue}`;
    if (!(await holdTaskLease(lease, deps.owner, LEASE_MS, db))) continue;
    try {
      // Read again under the lease: another replica may have indexed it since the list was read.
      const [row] = await dueRows(db, [found.connection_id], found.queue);
      if (!row) continue;
      const r = await indexDlq(a, row, cfg, db, deps);
      if (r) report.dlqs.push(r);
    } finally {
      await releaseTaskLease(lease, deps.owner, db).catch(() => undefined);
    }
  }
  return report;
}

/** The due DLQs of these connections (or the one DLQ `queue`, when it is due). */
function dueRows(db: PrismaClient, connectionIds: string[], queue?: string): Promise<DueRow[]> {
  return db.$queryRawUnsafe<DueRow[]>(
    `SELECT d.connection_id, d.queue, d.depth, d.entered_total::text AS entered_total, d.sampled_at, ${CHANGED} AS changed,
            s.connection_id IS NOT NULL AS has_state, s.positions, s.hot, s.summary_pending, s.summary_at,
            s.rescan_job_id::text AS rescan_job_id, s.rescan_at, s.indexed_at
       FROM dlq_status d
       LEFT JOIN triage_index_state s ON s.connection_id = d.connection_id AND s.queue = d.queue
      WHERE d.connection_id = ANY($1::text[]) AND ($2::text IS NULL OR d.queue = $2)
        AND d.missing_since IS NULL AND d.error IS NULL
        AND (${CHANGED} OR s.hot OR s.summary_pending OR s.rescan_job_id IS NOT NULL)
      ORDER BY d.connection_id, d.queue`,
    connectionIds,
    queue ?? null,
  );
}

type StateWrite = {
  mode: string;
  outcome: string;
  detail?: string | null;
  letters?: number;
  hot?: boolean;
  /** The figures acted on: "now" the row's (the default), "keep" the stored ones (the DLQ stays due), or a depth. */
  seen?: "now" | "keep" | { depth: number };
  indexedAt?: Date;
  summaryPending?: boolean;
  summaryAt?: Date;
  rescan?: { jobId: string | null; at?: Date; letters?: number };
};

async function writeState(db: PrismaClient, row: DueRow, now: Date, w: StateWrite): Promise<void> {
  const seen = w.seen ?? "now";
  const seenDepth = seen === "now" ? row.depth : seen === "keep" ? null : seen.depth;
  await db.$executeRawUnsafe(
    `INSERT INTO triage_index_state (connection_id, queue, mode, seen_depth, seen_entered, hot, outcome, detail, round_at,
                                     indexed_at, letters, summary_pending, summary_at, rescan_job_id, rescan_at, rescan_letters)
     VALUES ($1, $2, $3, $5::int, $6::bigint, COALESCE($7, false), $8, $9, $10::timestamptz, $11::timestamptz, COALESCE($12, 0),
             COALESCE($13, false), $14::timestamptz, $15::uuid, $16::timestamptz, $17)
     ON CONFLICT (connection_id, queue) DO UPDATE SET
       mode = EXCLUDED.mode,
       seen_depth = CASE WHEN $4 THEN triage_index_state.seen_depth ELSE EXCLUDED.seen_depth END,
       seen_entered = CASE WHEN $4 THEN triage_index_state.seen_entered ELSE EXCLUDED.seen_entered END,
       hot = COALESCE($7, triage_index_state.hot),
       outcome = EXCLUDED.outcome, detail = EXCLUDED.detail, round_at = EXCLUDED.round_at,
       indexed_at = COALESCE(EXCLUDED.indexed_at, triage_index_state.indexed_at),
       letters = COALESCE($12, triage_index_state.letters),
       summary_pending = COALESCE($13, triage_index_state.summary_pending),
       summary_at = COALESCE(EXCLUDED.summary_at, triage_index_state.summary_at),
       rescan_job_id = CASE WHEN $18 THEN EXCLUDED.rescan_job_id ELSE triage_index_state.rescan_job_id END,
       rescan_at = COALESCE(EXCLUDED.rescan_at, triage_index_state.rescan_at),
       rescan_letters = COALESCE(EXCLUDED.rescan_letters, triage_index_state.rescan_letters)`,
    row.connection_id,
    row.queue,
    w.mode,
    seen === "keep",
    seenDepth,
    seen === "keep" ? null : row.entered_total,
    w.hot ?? null,
    w.outcome,
    w.detail ?? null,
    now.toISOString(),
    w.indexedAt?.toISOString() ?? null,
    w.letters ?? null,
    w.summaryPending ?? null,
    w.summaryAt?.toISOString() ?? null,
    w.rescan?.jobId ?? null,
    w.rescan?.at?.toISOString() ?? null,
    w.rescan?.letters ?? null,
    w.rescan !== undefined,
  );
}

const FINISHED = new Set(["succeeded", "failed", "cancelled"]);

async function indexDlq(
  a: BrokerAdapter,
  row: DueRow,
  cfg: IndexingConfig,
  db: PrismaClient,
  deps: IndexerDeps,
): Promise<IndexedDlq | null> {
  const now = (deps.now ?? (() => new Date()))();
  const mode = a.tail ? "tail" : "rescan";
  const done = (outcome: string, letters = 0, jobId?: string): IndexedDlq => ({
    connectionId: row.connection_id,
    queue: row.queue,
    outcome,
    letters,
    ...(jobId ? { jobId } : {}),
  });
  if (indexingOff(cfg, row.connection_id, row.queue)) {
    await writeState(db, row, now, { mode, outcome: "off", hot: false, letters: 0, summaryPending: false });
    return done("off");
  }
  try {
    if (row.rescan_job_id) {
      const finished = await settleRescan(row, db, now, mode);
      if (!finished) return done("queued", 0, row.rescan_job_id);
      if (row.depth === finished.read || row.sampled_at.getTime() <= finished.at.getTime())
        return done(finished.outcome, Number.isNaN(finished.read) ? 0 : finished.read);
    }
    if (mode === "rescan") {
      // A look of the sampler from before the last rescan ended (it may have caught letters the
      // read held) is not judged: the DLQ is judged by its next look.
      if (row.indexed_at && row.sampled_at.getTime() <= new Date(row.indexed_at).getTime()) return null;
      // Before asking the broker anything: a DLQ rescanned lately waits, and stays due.
      if (rescanTooSoon(cfg, row.rescan_at, now)) return null;
    }
    // A tail read again only because its last round read letters was described when it changed:
    // the risk is asked of the broker whenever the sampler saw the DLQ change.
    if (mode === "tail" && !row.changed && row.has_state && row.hot) return await tailRound(a, row, cfg, db, deps, now);
    const dlq = await a.describeDlq(row.queue);
    if (dlq.readRisk) {
      await writeState(db, row, now, {
        mode,
        outcome: "risk",
        detail: dlq.readRisk.message,
        hot: false,
        letters: 0,
        summaryPending: false,
      });
      return done("risk");
    }
    return mode === "tail" ? await tailRound(a, row, cfg, db, deps, now) : await queueRescan(dlq, row, cfg, db, now);
  } catch (e) {
    const err = asAppError(e);
    if (!err) console.error(`[triage] indexing ${row.connection_id}/${row.queue} failed:`, e);
    await writeState(db, row, now, {
      mode,
      outcome: "failed",
      detail: err?.userMessage ?? "an unexpected error (logged)",
      hot: false,
      seen: "keep",
    }).catch(() => undefined);
    return done("failed");
  }
}

function rescanTooSoon(cfg: IndexingConfig, lastRescanAt: Date | null, now: Date): boolean {
  const v = rescanVerdict(cfg, { depth: 0, lastRescanAt, usedLastMinute: 0, now });
  return !v.go && v.retry;
}

/**
 * A rescan queued earlier: null while its job waits or runs; once it ended, its outcome is the
 * DLQ's latest indexing, and the depth it read is what the next look of the sampler is compared with.
 */
async function settleRescan(
  row: DueRow,
  db: PrismaClient,
  now: Date,
  mode: string,
): Promise<{ at: Date; read: number; outcome: string } | null> {
  const job = await jobStore().get(row.rescan_job_id!);
  if (job && !FINISHED.has(job.state)) {
    await writeState(db, row, now, { mode, outcome: "queued", seen: "keep" });
    return null;
  }
  const ok = job?.state === "succeeded";
  const read = Number((job?.progress as { read?: number } | null)?.read ?? 0);
  const at = job?.finishedAt ?? now;
  await writeState(db, row, now, {
    mode,
    outcome: ok ? "indexed" : "failed",
    detail: ok ? null : (job?.error ?? "the rescan did not finish"),
    letters: read,
    ...(ok ? { indexedAt: at, seen: { depth: read } } : { seen: "keep" }),
    rescan: { jobId: null },
  });
  row.rescan_job_id = null;
  return { at, read: ok ? read : Number.NaN, outcome: ok ? "indexed" : "failed" };
}

/** Reads the letters after the stored positions and writes them through the scan's path. */
async function tailRound(
  a: BrokerAdapter,
  row: DueRow,
  cfg: IndexingConfig,
  db: PrismaClient,
  deps: IndexerDeps,
  now: Date,
): Promise<IndexedDlq> {
  const batchSize = deps.batchSize ?? 500;
  const batchBytes = deps.batchBytes ?? 8 * 1024 * 1024;
  const ctx = {
    connectionId: row.connection_id,
    queue: row.queue,
    rules: (await loadRules(db)).rules,
    ring: keyring(),
    randomAccess: a.capabilities.randomAccess,
    search: searchMaskingFor(await loadMaskingConfig(db), row.connection_id, row.queue, maskingHashKey()),
  };
  const scanId = randomUUID();
  const positions: TailPositions = { ...(row.positions ?? {}) };
  // The state row exists before positions are written into it.
  if (!row.has_state) await writeState(db, row, now, { mode: "tail", outcome: "indexing", seen: "keep" });
  let batch = new Map<string, IndexRow>();
  let pending: TailPositions = {};
  let weight = 0;
  let read = 0;
  let written = 0;
  const flush = async () => {
    if (batch.size === 0) return;
    const prepared = prepareLetters([...batch.values()], db);
    batch = new Map();
    weight = 0;
    await writeLetters(row.connection_id, row.queue, scanId, prepared);
    written += prepared.count;
    // Positions move only once their letters are in the index: after a crash they are read again (an upsert).
    Object.assign(positions, pending);
    pending = {};
    await db.$executeRawUnsafe(
      `UPDATE triage_index_state SET positions = $3::jsonb WHERE connection_id = $1 AND queue = $2`,
      row.connection_id,
      row.queue,
      JSON.stringify(positions),
    );
  };
  let limited = false;
  for await (const t of a.tail!.readAfter(row.queue, positions, {
    maxBodyBytes: PAYLOAD_CAP_BYTES,
    signal: deps.signal,
  })) {
    const r = toIndexRow(t.letter, ctx);
    batch.set(r.letter_id, r);
    weight += rowWeight(r);
    pending[t.partition] = t.next;
    read++;
    if (batch.size >= batchSize || weight >= batchBytes) await flush();
    if (read >= cfg.maxLettersPerRound || deps.signal?.aborted) {
      limited = true;
      break;
    }
  }
  await flush();
  // Each refresh reads every present letter of the DLQ: paced while letters keep coming.
  const summaryPending = written > 0 || row.summary_pending === true;
  const sinceLast = row.summary_at ? now.getTime() - new Date(row.summary_at).getTime() : Infinity;
  const refresh = summaryPending && sinceLast >= (deps.summaryEverySeconds ?? 10) * 1000;
  if (refresh) await refreshGroupSummary(row.connection_id, row.queue, db);
  const outcome = written > 0 ? "indexed" : "current";
  await writeState(db, row, now, {
    mode: "tail",
    outcome,
    letters: read,
    hot: read > 0 || limited,
    // Current once the round read to the end and the groups show it.
    ...(limited || (summaryPending && !refresh) ? {} : { indexedAt: now }),
    summaryPending: summaryPending && !refresh,
    ...(refresh ? { summaryAt: now } : {}),
  });
  return { connectionId: row.connection_id, queue: row.queue, outcome, letters: read };
}

/** Queues a system scan of a DLQ that can only be read whole, when the interval and the budget allow. */
async function queueRescan(
  dlq: DlqSummary,
  row: DueRow,
  cfg: IndexingConfig,
  db: PrismaClient,
  now: Date,
): Promise<IndexedDlq | null> {
  const used = await db.$queryRawUnsafe<Array<{ n: number | null }>>(
    `SELECT sum(rescan_letters)::int AS n FROM triage_index_state
      WHERE connection_id = $1 AND rescan_at > $2::timestamptz - interval '1 minute'`,
    row.connection_id,
    now.toISOString(),
  );
  const verdict = rescanVerdict(cfg, {
    depth: dlq.depth,
    lastRescanAt: row.rescan_at,
    usedLastMinute: used[0]?.n ?? 0,
    now,
  });
  if (!verdict.go) {
    if (verdict.retry) return null;
    await writeState(db, row, now, { mode: "rescan", outcome: "over-budget", detail: verdict.why, letters: 0 });
    return { connectionId: row.connection_id, queue: row.queue, outcome: "over-budget", letters: 0 };
  }
  // An operator's scan queued or running indexes it already; look again after it.
  const busy = await db.job.count({
    where: {
      kind: "scan",
      connectionId: row.connection_id,
      queue: row.queue,
      state: { in: ["queued", "running", "paused", "cancelling"] },
    },
  });
  if (busy > 0) return null;
  let job: Awaited<ReturnType<ReturnType<typeof jobStore>["enqueue"]>>;
  try {
    job = await jobStore().enqueue({
      kind: "scan",
      connectionId: row.connection_id,
      queue: row.queue,
      params: { indexer: true },
      createdBy: null,
    });
  } catch (e) {
    // An operator's scan was queued meanwhile (one active scan per DLQ): look again after it.
    if (isUniqueViolation(e)) return null;
    throw e;
  }
  await recordAudit({
    actor: SYSTEM_ACTOR,
    action: "triage.scan_start",
    outcome: "success",
    operationId: job.id,
    connectionId: row.connection_id,
    queue: row.queue,
    target: job.id,
    details: { jobId: job.id, indexer: true, depth: dlq.depth },
  });
  await writeState(db, row, now, {
    mode: "rescan",
    outcome: "queued",
    letters: 0,
    rescan: { jobId: job.id, at: now, letters: dlq.depth ?? 0 },
  });
  return { connectionId: row.connection_id, queue: row.queue, outcome: "queued", letters: 0, jobId: job.id };
}
