import "server-only";
import { recordAudit } from "@/lib/audit";
import { can, isRole } from "@/lib/auth/permissions";
import { getUserById } from "@/lib/auth/users";
import { archivedIds, writeArchive, type ArchiveContext } from "@/lib/archive/store";
import { getAdapter } from "@/lib/connections/registry";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { RemoveResult } from "@/lib/brokers/contract/remove";
import { getDb } from "@/lib/db";
import { AppError, asAppError, loggableError } from "@/lib/errors";
import type { DiscardPlan, PrismaClient } from "@/lib/generated/prisma/client";
import { betweenBatches, consoleStopping, finishLedgerJob, JobStop, pace } from "@/lib/jobs/ledger";
import { discardResult } from "./result";
import { LeaseLostError } from "@/lib/jobs/store";
import type { JobContext, JobHandler, JobOutcome, JobProgress } from "@/lib/jobs/types";
import { countLeftovers, removeDiscardLeftovers } from "./leftovers";
import {
  claimPending,
  countDiscardStates,
  flushDiscardAudit,
  recordDiscardOutcomes,
  resetRemoving,
  type DiscardAuditContext,
  type DiscardCounts,
  type DiscardSettled,
} from "./ledger";

export interface DiscardDeps {
  adapterFor: (connectionId: string) => BrokerAdapter;
  db: () => PrismaClient;
  /** Letters per batch (one removeLetters call, one ledger write, one audit write). Default 100. */
  batchSize: number;
  /** Writes the archive row and resolves once it is committed (default: lib/archive/store.ts writeArchive). */
  archive: (db: PrismaClient, ctx: ArchiveContext, copy: LetterCopy) => Promise<string>;
  /** Test seam: called after each batch's outcomes are written (e.g. to cancel or take the lease mid-job). */
  afterBatch?: (jobId: string, batch: number) => Promise<void>;
}

/**
 * The `discard` job. For each batch of the ledger, the adapter reads every letter, verifies its
 * checksum, hands its complete copy to us; we write the archive row (committed) and only then does
 * the adapter remove the letter from the DLQ. A letter whose archive write fails stays in the DLQ,
 * recorded "failed" with the reason. Resumable from the ledger after a crash or a lost lease.
 */
export function discardHandler(deps: Partial<DiscardDeps> = {}): JobHandler {
  const d: DiscardDeps = { adapterFor: getAdapter, db: getDb, batchSize: 100, archive: writeArchive, ...deps };
  return (ctx) => new DiscardRun(ctx, d).run();
}

class DiscardRun {
  private readonly db: PrismaClient;
  private plan!: DiscardPlan;
  private adapter!: BrokerAdapter;
  private audit!: DiscardAuditContext;
  private counts!: DiscardCounts;
  private startedAt = Date.now();
  private settledAtStart = 0;
  private batches = 0;

  constructor(
    private readonly ctx: JobContext,
    private readonly d: DiscardDeps,
  ) {
    this.db = d.db();
  }

  async run(): Promise<JobOutcome> {
    const plan = await this.db.discardPlan.findUnique({ where: { jobId: this.ctx.job.id } });
    if (!plan) throw new AppError("internal:discard", { userMessage: "This discard has no plan; start a new one." });
    this.plan = plan;
    this.adapter = this.d.adapterFor(plan.connectionId);
    this.audit = {
      jobId: plan.jobId,
      connectionId: plan.connectionId,
      queue: plan.queue,
      reason: plan.reason,
      actor: { id: plan.createdById, email: plan.createdByEmail, role: plan.createdByRole },
    };
    await this.authorizeCreator();
    await resetRemoving(this.db, plan.jobId);
    await flushDiscardAudit(this.db, this.audit);
    this.counts = await countDiscardStates(this.db, plan.jobId);
    this.settledAtStart = this.settled();
    try {
      await this.removeLeftovers();
      for (;;) {
        await this.control();
        const rows = await claimPending(this.db, plan.jobId, this.d.batchSize);
        if (rows.length === 0) break;
        await this.removeBatch(rows.map((r) => ({ letterId: r.letterId, sha256: r.sha256 })));
        await this.d.afterBatch?.(plan.jobId, ++this.batches);
      }
      await this.markIndex();
      return await this.finish("succeeded");
    } catch (e) {
      if (e instanceof JobStop) return e.outcome;
      if (e instanceof LeaseLostError) throw e;
      if (this.ctx.signal.aborted)
        throw consoleStopping("The console stopped; the discard resumes from its ledger when a console runs again.");
      if (e instanceof BrokerError) {
        await resetRemoving(this.db, this.plan.jobId).catch(() => undefined);
        // What was discarded leaves the triage index now, so that a new discard of the rest does not select it again.
        await this.markIndex().catch(() => undefined);
        const leftovers = await countLeftovers(this.db, this.plan.jobId).catch(() => 0);
        const after =
          leftovers > 0
            ? ` ${leftovers} letter(s) discarded just before the connection broke may be back in the DLQ (the broker does not confirm a removal): the next discard of this DLQ, or an undo of this one, removes those copies first; their archive copies are kept.`
            : "";
        if (e.kind === "risky_read") {
          throw new AppError(e.code, {
            userMessage: `${e.userMessage} Nothing more was discarded. Move the letters to safety from the DLQ's page, then discard them from the safe queue.${after}`,
            cause: e,
          });
        }
        // Letters not yet removed are still in the DLQ (rows left "removing" are asked again on a restart).
        throw new AppError(e.code, {
          userMessage: `${e.userMessage} Letters not yet discarded are still in the DLQ; start a new discard for them when the broker is back.${after}`,
          cause: e,
        });
      }
      throw e;
    }
  }

  /**
   * The job checks on the server too, on every run (a resumed job included): the admin who started
   * it must still be an enabled user allowed to discard. Otherwise nothing more is removed, the
   * refusal is audited, and the job fails saying why.
   */
  private async authorizeCreator() {
    const user = this.plan.createdById ? await getUserById(this.plan.createdById) : null;
    if (user && !user.disabled && isRole(user.role) && can(user.role, "discard:run")) return;
    await recordAudit({
      actor: {
        id: this.plan.createdById,
        email: this.plan.createdByEmail,
        role: user && isRole(user.role) ? user.role : null,
      },
      action: "discard.run",
      outcome: "denied",
      operationId: this.plan.jobId,
      connectionId: this.plan.connectionId,
      queue: this.plan.queue,
      target: this.plan.jobId,
      details: { permission: "discard:run", disabled: user?.disabled ?? null },
    });
    throw new AppError("forbidden:discard:run", {
      userMessage:
        "The admin who started this discard may no longer discard letters (role changed or account disabled), so it stopped; letters not yet discarded are still in the DLQ.",
    });
  }

  /**
   * Before any letter of this run: the DLQ copies of letters that this discard, or an earlier one
   * of the same DLQ, recorded discarded in a batch whose connection then broke (./leftovers.ts).
   * A broker still away throws here, like a batch would.
   */
  private async removeLeftovers() {
    if (!this.adapter.capabilities.removalUnconfirmed) return;
    await removeDiscardLeftovers(
      this.db,
      this.adapter,
      { connectionId: this.plan.connectionId, queue: this.plan.queue },
      {
        actor: this.audit.actor as never,
        by: `discard ${this.plan.jobId}`,
        signal: this.ctx.signal,
      },
    );
  }

  private async removeBatch(requests: Array<{ letterId: string; sha256: string }>) {
    const archived = new Map<string, string>();
    const archiveCtx: ArchiveContext = {
      jobId: this.plan.jobId,
      connectionId: this.plan.connectionId,
      queue: this.plan.queue,
      reason: this.plan.reason,
      actor: this.audit.actor,
    };
    const results: RemoveResult[] = [];
    let broken = false;
    const stream = this.adapter.removeLetters(this.plan.queue, requests, {
      operationId: this.plan.jobId,
      signal: this.ctx.signal,
      acceptRisk: this.plan.acceptRisk,
      beforeRemove: async (copy) => {
        try {
          archived.set(copy.letterId, await this.d.archive(this.db, archiveCtx, copy));
        } catch (e) {
          if (asAppError(e)) throw e;
          console.error("[discard] archive write failed:", loggableError(e));
          throw new AppError("unavailable:archive", {
            userMessage:
              "Its archive copy could not be written (database error), so it was not removed: it stays in the DLQ.",
            cause: e,
          });
        }
      },
    });
    try {
      for await (const r of stream) results.push(r);
    } catch (e) {
      broken = true;
      throw e;
    } finally {
      // Outcomes the broker already reported are written even when the batch broke off.
      await this.settle(results, archived, broken && this.adapter.capabilities.removalUnconfirmed === true);
    }
  }

  /**
   * `unconfirmed`: the batch broke off on a broker that never confirms a removal; its removals are
   * flagged for the leftover check. So are the letters it archived whose outcome never came back:
   * the adapter sends a removal right after the archive write, so each may be gone or back in the
   * DLQ, and its archive copy exists either way. Recorded discarded and flagged, each ends once:
   * in the archive, its DLQ copy (if any) removed by the next discard, an undo or the sweep.
   */
  private async settle(reported: RemoveResult[], archived: Map<string, string>, unconfirmed: boolean) {
    const ids = new Set(reported.map((r) => r.letterId));
    const results: RemoveResult[] = unconfirmed
      ? [
          ...reported,
          ...[...archived.keys()]
            .filter((letterId) => !ids.has(letterId))
            .map((letterId) => ({ letterId, outcome: "removed" as const, reason: null })),
        ]
      : reported;
    // "missing" for a letter archived by an earlier attempt of this job: that attempt removed it
    // after the archive row was committed (it crashed before writing the ledger).
    const earlier = await archivedIds(
      this.db,
      this.plan.jobId,
      results.filter((r) => r.outcome === "missing").map((r) => r.letterId),
    );
    const settled: DiscardSettled[] = results.map((r) => {
      if (r.outcome === "removed")
        return {
          letterId: r.letterId,
          state: "discarded",
          reason: null,
          archiveId: archived.get(r.letterId) ?? null,
          leftoverCheck: unconfirmed,
        };
      if (r.outcome === "missing" && earlier.has(r.letterId)) {
        return {
          letterId: r.letterId,
          state: "discarded",
          reason: "Removed by an earlier attempt of this discard, after its archive copy was written.",
          archiveId: earlier.get(r.letterId)!,
        };
      }
      return { letterId: r.letterId, state: r.outcome, reason: r.reason, archiveId: null };
    });
    for (const s of settled) this.counts[s.state]++;
    this.counts.pending = Math.max(0, this.counts.pending - settled.length);
    await recordDiscardOutcomes(this.db, this.plan.jobId, settled);
    await flushDiscardAudit(this.db, this.audit);
  }

  /** Discarded letters leave the triage index's live set (Kafka keeps the record: marked handled). */
  private async markIndex() {
    await this.db.$executeRawUnsafe(
      `UPDATE triage_letters t SET gone_at = COALESCE(t.gone_at, now()), handled_outcome = CASE WHEN $3 THEN t.handled_outcome ELSE 'discarded' END
       FROM discard_letters d
       WHERE d.job_id = $1::uuid AND d.state = 'discarded' AND t.connection_id = $2 AND t.queue = $4 AND t.letter_id = d.letter_id`,
      this.plan.jobId,
      this.plan.connectionId,
      this.adapter.capabilities.perLetterRemoval,
      this.plan.queue,
    );
  }

  /** Between batches: saves progress, extends the lease, honours a cancel. */
  private async control() {
    const r = await betweenBatches(
      this.ctx,
      this.progress(),
      "The console stopped; the discard resumes from its ledger.",
    );
    if (r.cancelRequested) {
      await this.markIndex();
      throw new JobStop(await this.finish("cancelled"));
    }
  }

  private async finish(state: "succeeded" | "cancelled"): Promise<JobOutcome> {
    this.counts = await countDiscardStates(this.db, this.plan.jobId);
    return finishLedgerJob(this.audit, "discard.finished", state, this.progress(), discardResult(this.counts));
  }

  private settled(): number {
    const c = this.counts;
    return c.discarded + c.failed + c.missing + c.checksum_mismatch;
  }

  private progress(): JobProgress {
    const c = this.counts;
    const done = this.settled();
    const left = c.pending + c.removing;
    const { rate, eta } = pace({
      done,
      doneAtStart: this.settledAtStart,
      seconds: (Date.now() - this.startedAt) / 1000,
      left,
      fallbackRate: null,
    });
    return {
      read: done,
      total: this.plan.total,
      discarded: c.discarded,
      failed: c.failed + c.checksum_mismatch,
      checksumMismatch: c.checksum_mismatch,
      missing: c.missing,
      pending: left,
      rate,
      eta,
    };
  }
}
