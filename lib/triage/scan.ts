import "server-only";
import { randomUUID } from "node:crypto";
import { recordAudit } from "@/lib/audit";
import { getAdapter } from "@/lib/connections/registry";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { StreamShortfall } from "@/lib/brokers/contract/dlq";
import { keyring } from "@/lib/crypto/payload-cipher";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { jobAuditEntry } from "@/lib/jobs/audit";
import { cooperativeTurns } from "@/lib/jobs/turns";
import type { JobContext, JobHandler, JobOutcome, JobProgress } from "@/lib/jobs/types";
import { GROUPING_VERSION } from "./grouping";
import { PAYLOAD_CAP_BYTES, rowWeight, toIndexRow, type IndexRow } from "./index-row";
import { databaseNow, markGone, prepareLetters, refreshGroupSummary, writeLetters } from "./index-store";
import { readLostLetters, watchRead, type ReadLoss } from "./read-watch";
import { loadRules } from "./rules-store";
import { searchMaskingFor } from "./masked-search";
import { loadMaskingConfig } from "@/lib/masking/store";
import { maskingHashKey } from "@/lib/masking/key";

export interface ScanParams {
  /** The operator accepted the DLQ's read risk (recorded and audited by startScan). */
  acceptRisk?: boolean;
}

/** Kept in the job: a resumed run keeps the scan id, so reconciliation still sees every row it wrote. */
export interface ScanCheckpoint {
  scanId: string;
  runs: number;
  /** Letters written by the latest run before it stopped. */
  written: number;
}

export interface ScanDeps {
  adapterFor: (connectionId: string) => BrokerAdapter;
  db: () => PrismaClient;
  /** Letters per INSERT (default 500); a batch is also cut at ~8 MiB of payload. */
  batchSize?: number;
  batchBytes?: number;
  /** Batch writes in flight at once (default 3). */
  writers?: number;
}

class Aborted extends Error {}

/**
 * The `scan` job: streams the whole DLQ (bounded memory: one batch being built, a few being
 * written), upserts each batch with one statement, checkpoints and looks for a cancel between
 * batches; at the end marks gone the rows this scan did not see and recomputes the groups.
 *
 * A resumed run (after its process died) reads the DLQ again from the head under the same scan
 * id: the adapters can only stream from the head, and upserts are idempotent.
 */
export function scanHandler(deps: Partial<ScanDeps> = {}): JobHandler {
  const d: ScanDeps = {
    adapterFor: getAdapter,
    db: getDb,
    batchSize: 500,
    batchBytes: 8 * 1024 * 1024,
    writers: 3,
    ...deps,
  };
  return (ctx) => runScan(ctx, d);
}

async function runScan(ctx: JobContext, d: ScanDeps): Promise<JobOutcome> {
  const { job } = ctx;
  const params = (job.params ?? {}) as ScanParams;
  const prev = job.checkpoint as ScanCheckpoint | null;
  const cp: ScanCheckpoint = { scanId: prev?.scanId ?? randomUUID(), runs: (prev?.runs ?? 0) + 1, written: 0 };
  const first = await ctx.checkpoint({ checkpoint: cp });
  if (first.cancelRequested) return { state: "cancelled" };

  const adapter = d.adapterFor(job.connectionId);
  const dlq = await adapter.describeDlq(job.queue);
  const risk = dlq.readRisk;
  if (risk && !params.acceptRisk) {
    throw new AppError("confirmation_required:read", {
      userMessage: `Reading this DLQ can cost letters (${risk.message}). Start the scan again and confirm the risk.`,
    });
  }
  // One confirmed act, one read: a risky read that was interrupted is not read again by itself.
  if (risk && prev) {
    throw new AppError("conflict:read-interrupted", {
      userMessage:
        "This read of a DLQ whose reads cost letters was interrupted (the console stopped while it ran). Reading it again counts against the letters once more, so it does not resume by itself: start a new read from the DLQ's page if you still need one.",
    });
  }
  const watch = risk ? await watchRead(adapter, job.queue, dlq, risk) : null;
  const total = dlq.depth;
  const rules = (await loadRules(d.db())).rules;
  const ring = keyring();
  const search = searchMaskingFor(await loadMaskingConfig(d.db()), job.connectionId, job.queue, maskingHashKey());
  const db = d.db();
  const started = Date.now();
  // Letters the indexer's tail writes while this read runs are present whatever this read sees.
  const readSince = await databaseNow(db);
  let read = 0;
  let written = 0;
  let cancelled = false;

  const progress = (): JobProgress => {
    const secs = Math.max((Date.now() - started) / 1000, 0.001);
    const rate = Math.round((read / secs) * 10) / 10;
    const left = total === null ? null : Math.max(total - read, 0);
    return {
      read,
      written,
      total,
      rate,
      eta: left === null || rate <= 0 ? null : Math.round(left / rate),
      run: cp.runs,
      scanId: cp.scanId,
      // The grouping its keys are made under (lib/triage/regroup.ts).
      groupingVersion: GROUPING_VERSION,
    };
  };

  let batch = new Map<string, IndexRow>();
  let weight = 0;
  // Up to `writers` batch writes in flight while the next batch is read (Postgres uses its own
  // cores meanwhile). Each settles to its error (never rejects unobserved, which would crash the
  // process); an error is rethrown at the next wait.
  // Memory is bounded in bytes as well as in batches: at most `writers` batches' worth of rows
  // (by rowWeight) are held by writes in flight, whatever the letters' sizes.
  const inFlight = new Set<Promise<unknown>>();
  const maxInFlightBytes = d.writers! * d.batchBytes!;
  let inFlightBytes = 0;
  let writeError: unknown = null;
  const settle = async (atMost: number, bytesFree = 0) => {
    while (inFlight.size > atMost || (inFlight.size > 0 && inFlightBytes + bytesFree > maxInFlightBytes))
      await Promise.race(inFlight);
    if (writeError) throw writeError;
  };
  const flush = async () => {
    await settle(d.writers! - 1, weight);
    if (batch.size === 0) return;
    // Encoded now: the rows are not kept while the write is in flight.
    const prepared = prepareLetters([...batch.values()], db);
    const bytes = weight;
    batch = new Map();
    weight = 0;
    inFlightBytes += bytes;
    const p: Promise<unknown> = writeLetters(job.connectionId, job.queue, cp.scanId, prepared)
      .finally(() => {
        inFlightBytes -= bytes;
      })
      .then(async () => {
        written += prepared.count;
        const r = await ctx.checkpoint({ progress: progress(), checkpoint: { ...cp, written } });
        if (r.cancelRequested) cancelled = true;
      })
      .catch((e: unknown) => {
        writeError ??= e ?? new Error("write failed");
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };

  let shortfall: StreamShortfall | null = null;
  const stream = adapter.stream(job.queue, {
    maxBodyBytes: PAYLOAD_CAP_BYTES,
    acceptRisk: params.acceptRisk,
    signal: ctx.signal,
    onShortfall: (s) => {
      shortfall = s;
    },
  });
  // Pages served by this process get their turn between letters (lib/jobs/turns.ts).
  const turns = cooperativeTurns();
  try {
    for await (const letter of stream) {
      if (ctx.signal.aborted) throw new Aborted();
      const turn = turns.turn();
      if (turn) await turn;
      const row = toIndexRow(letter, {
        connectionId: job.connectionId,
        queue: job.queue,
        rules,
        ring,
        randomAccess: adapter.capabilities.randomAccess,
        search,
      });
      batch.set(row.letter_id, row); // one row per id in a statement: ON CONFLICT cannot touch a row twice
      weight += rowWeight(row);
      read++;
      watch?.seen(letter);
      if (batch.size >= d.batchSize! || weight >= d.batchBytes!) await flush();
      if (cancelled) break;
    }
    await flush();
    await settle(0);
  } catch (e) {
    // Let in-flight writes settle so nothing writes after the job gave up its lease.
    await Promise.allSettled([...inFlight]);
    if (e instanceof Aborted || ctx.signal.aborted)
      throw new AppError("unavailable:stopping", {
        userMessage: "The console stopped; the scan resumes when a console runs again.",
      });
    throw e;
  }

  // The read is over (the stream closed, so every letter went back): what did it cost?
  const readLoss = watch ? await watch.finish() : null;
  if (readLoss && readLostLetters(readLoss)) await auditReadLoss(job, readLoss);
  const measured = readLoss ? { readLoss } : {};

  if (cancelled) {
    // A partial scan cannot tell which letters left: no reconciliation, but show what was read.
    await refreshGroupSummary(job.connectionId, job.queue, db);
    await auditScanEnd(job, "cancelled", { ...progress(), ...measured });
    return { state: "cancelled", progress: { ...progress(), ...measured } };
  }
  // A read that left letters unread cannot tell which letters left: nothing is marked gone, and
  // the scan says why (progress.partial), like a cancelled one.
  const partial = shortfall as StreamShortfall | null;
  const gone = partial ? 0 : await markGone(job.connectionId, job.queue, cp.scanId, db, readSince);
  await refreshGroupSummary(job.connectionId, job.queue, db);
  const final = { ...progress(), total: read, eta: 0, gone, ...(partial ? { partial } : {}), ...measured };
  await auditScanEnd(job, "succeeded", final);
  return { state: "succeeded", progress: final };
}

/** The scan's end in the audit log, under the job id as operation id (startScan wrote the start). */
async function auditScanEnd(job: JobContext["job"], state: string, details: Record<string, unknown>) {
  await recordAudit(
    jobAuditEntry(job, "triage.scan_finished", {
      details: {
        state,
        read: details.read,
        total: details.total,
        gone: details.gone ?? null,
        runs: details.run,
        partial: details.partial ?? null,
        readLoss: details.readLoss ?? null,
      },
    }),
  ).catch((e) => console.error(`[triage] could not audit the end of scan ${job.id}: ${(e as Error).message}`));
}

/** Letters that left a risky DLQ during a read, on record apart from the scan's end (a security reviewer looks for these). */
async function auditReadLoss(job: JobContext["job"], loss: ReadLoss) {
  await recordAudit(jobAuditEntry(job, "dlq.read_loss", { details: { ...loss } })).catch((e) =>
    console.error(`[triage] could not audit the letters lost by scan ${job.id}: ${(e as Error).message}`),
  );
}
