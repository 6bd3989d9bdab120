import "server-only";
import { recordAudit, recordAuditBatch } from "@/lib/audit";
import type { AuditEntry } from "@/lib/audit/types";
import { getAdapter } from "@/lib/connections/registry";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { SafeMoveEvent } from "@/lib/brokers/contract/safe-move";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { jobAuditEntry } from "@/lib/jobs/audit";
import { consoleStopping } from "@/lib/jobs/ledger";
import type { JobContext, JobHandler, JobOutcome, JobProgress } from "@/lib/jobs/types";

export interface SafeMoveParams {
  /** The queue the letters go to, fixed when the operator confirmed the move. */
  target: string;
}

export interface SafeMoveProgress extends JobProgress {
  moved: number;
  failed: number;
  total: number | null;
  target: string;
  /** Depths after the move, measured once it ended. */
  dlqDepthAfter?: number | null;
  targetDepthAfter?: number | null;
}

interface Deps {
  adapterFor: (connectionId: string) => BrokerAdapter;
  db: () => PrismaClient;
  /** Letters per ledger and audit write (default 200). */
  batchSize?: number;
}

type LetterEvent = Extract<SafeMoveEvent, { kind: "letter" }>;

/**
 * The `safe-move` job: moves every letter of a risky DLQ into the queue where reading is safe
 * (`SafeMoveOps.move`: confirmed at the target before it leaves the DLQ). Each settled
 * letter gets a ledger row (redrive_letters, under this job) and an audit row `letter.safe_move`,
 * written in batches; the job's progress carries the counts. A resumed run moves what is still in
 * the DLQ (moved letters are gone from it; ledger rows are keyed by letter, so none is doubled).
 */
export function safeMoveHandler(deps: Partial<Deps> = {}): JobHandler {
  const d: Deps = { adapterFor: getAdapter, db: getDb, batchSize: 200, ...deps };
  return (ctx) => runSafeMove(ctx, d);
}

async function runSafeMove(ctx: JobContext, d: Deps): Promise<JobOutcome> {
  const { job } = ctx;
  const { target } = job.params as unknown as SafeMoveParams;
  const adapter = d.adapterFor(job.connectionId);
  const safeMove = adapter.safeMove;
  if (!safeMove) {
    throw new AppError("bad_request:safe-move", {
      userMessage: `${adapter.displayName} cannot move letters to safety.`,
    });
  }
  const db = d.db();
  const prev = (job.progress ?? {}) as Partial<SafeMoveProgress>;
  let seq = await db.redriveLetter.count({ where: { jobId: job.id } });
  const p: SafeMoveProgress = { moved: prev.moved ?? 0, failed: prev.failed ?? 0, total: prev.total ?? null, target };
  const base = { moved: p.moved, failed: p.failed };
  let byLetter = false;
  let pending: LetterEvent[] = [];
  let cancelled = false;

  const flush = async () => {
    if (pending.length > 0) {
      const batch = pending;
      pending = [];
      const now = new Date();
      await db.redriveLetter.createMany({
        data: batch.map((e) => ({
          jobId: job.id,
          seq: seq++,
          letterId: e.letterId,
          sha256: e.sha256,
          messageId: e.messageId,
          stage: "safe-move",
          state: e.outcome,
          destination: e.outcome === "moved" ? target : null,
          reason: e.reason,
          movedAt: e.outcome === "moved" ? now : null,
        })),
        skipDuplicates: true,
      });
      await recordAuditBatch(batch.map((e) => letterAudit(job, target, e)));
    }
    const r = await ctx.checkpoint({ progress: { ...p } });
    if (r.cancelRequested) cancelled = true;
  };

  const stop = new AbortController();
  const onAbort = () => stop.abort();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  try {
    for await (const e of safeMove.move(job.queue, target, { signal: stop.signal })) {
      if (e.kind === "letter") {
        byLetter = true;
        pending.push(e);
        if (e.outcome === "moved") p.moved++;
        else p.failed++;
        if (pending.length >= d.batchSize!) await flush();
      } else {
        if (e.total !== null) p.total = e.total;
        // A native move (no letter events) reports only the broker's counts, for this run.
        if (!byLetter) Object.assign(p, { moved: base.moved + e.moved, failed: base.failed + e.failed });
        await flush();
      }
      if (cancelled) stop.abort();
    }
    await flush();
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
  }
  if (ctx.signal.aborted) throw consoleStopping("The console stopped; the move resumes when a console runs again.");

  p.dlqDepthAfter = (await adapter.describeDlq(job.queue).catch(() => null))?.depth ?? null;
  p.targetDepthAfter = (await adapter.describeDlq(target).catch(() => null))?.depth ?? null;
  p.total ??= p.moved + p.failed;
  await recordAudit(
    jobAuditEntry(job, "dlq.safe_move_finished", {
      target,
      details: {
        state: cancelled ? "cancelled" : "succeeded",
        moved: p.moved,
        failed: p.failed,
        dlqDepthAfter: p.dlqDepthAfter,
        targetDepthAfter: p.targetDepthAfter,
      },
    }),
  );
  return { state: cancelled ? "cancelled" : "succeeded", progress: p };
}

function letterAudit(job: JobContext["job"], target: string, e: LetterEvent): AuditEntry {
  return jobAuditEntry(job, "letter.safe_move", {
    outcome: e.outcome === "moved" ? "success" : "failure",
    scope: "letter",
    target: e.letterId,
    // In sorted key order: the row's MAC then serialises them in one JSON.stringify (canonicalJson).
    details: { bodySize: e.bodySize, reason: e.reason, sha256: e.sha256, to: target },
  });
}
