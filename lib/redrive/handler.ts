import "server-only";
import { recordAudit, type AuditOutcome } from "@/lib/audit";
import { getAdapter } from "@/lib/connections/registry";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient, RedrivePlan } from "@/lib/generated/prisma/client";
import type { JobResult } from "@/lib/jobs/accounting";
import { betweenBatches, consoleStopping, finishLedgerJob, JobStop, pace } from "@/lib/jobs/ledger";
import { LeaseLostError } from "@/lib/jobs/store";
import type { JobContext, JobHandler, JobOutcome, JobProgress } from "@/lib/jobs/types";
import { BatchMover, isBrokerAway } from "./batch-mover";
import { breakerVerdict } from "./breaker";
import { realClock, type Clock } from "./clock";
import { loadPlan, pauseSelf, setStage } from "./control";
import { GroupRepair } from "./group-repair";
import {
  assignSample,
  breakerWindow,
  claimMissing,
  claimNext,
  confirmUnconfirmed,
  countMoving,
  countStates,
  failedKeys,
  flushAudit,
  interruptMoving,
  markReturned,
  type LetterAuditContext,
} from "./ledger";
import type { Parking, RedriveRepair, Stage } from "./plan";
import { redriveResult } from "./result";
import { findReturns } from "./returns";
import { decideVerdict, sampleWatchOf, verdictSentence, type SampleVerdict } from "./sample-verdict";
import { gatherEvidence, recordVerdict, sampleTargets, startWatching, takeMarks } from "./sample-watch";
import { auditRefusal, runnerRefusal } from "./runner-check";
import { TokenBucket, batchSizeFor } from "./token-bucket";

export interface RedriveDeps {
  adapterFor: (connectionId: string) => BrokerAdapter;
  db: () => PrismaClient;
  clock: Clock;
  /** How often returns are looked for while watching the sample and during the bulk stage (default 10 s). */
  returnCheckMs: number;
  /** Letters per sample batch (default 50). */
  sampleBatch: number;
  /**
   * How long after taking a job over (rows were left "moving") a run waits for the previous holder
   * to let go of its letters, before it asks for them again (and before the final verification
   * pass counts a "missing" letter as gone). Default: a third of the lease plus a second.
   */
  verifyGraceMs?: number;
  /**
   * A move that yields no result for this long asks the broker for a ping (answered within the
   * same time); when the broker does not answer, the move is abandoned as "unreachable" and the job
   * pauses, instead of waiting on a connection that is gone (default 15 s). A broker that answers
   * lets the move go on waiting: an SQS long poll or a slow confirm is not a stall.
   */
  stallMs: number;
  /**
   * How often a running job asks again whether the users it acts for may still run it (runner-check.ts),
   * besides at the start of every run (default 5 s): a demotion stops a long run within that time.
   */
  runnerCheckMs: number;
}

/**
 * The `redrive` job. Stage 1 moves the sample, then watches the DLQ for the sample's letters
 * coming back and pauses with the verdict; stage 2 (after startBulk) moves the rest at the plan's
 * rate, looking for returns between batches and pausing itself when the breaker trips. Every step
 * is resumable from the ledger; the engine itself never removes a letter (only the adapter does,
 * after the target confirmed it).
 */
export function redriveHandler(deps: Partial<RedriveDeps> = {}): JobHandler {
  const d: RedriveDeps = {
    adapterFor: getAdapter,
    db: getDb,
    clock: realClock,
    returnCheckMs: 10_000,
    sampleBatch: 50,
    stallMs: 15_000,
    runnerCheckMs: 5000,
    ...deps,
  };
  return (ctx) => new RedriveRun(ctx, d).run();
}

class RedriveRun {
  private readonly db: PrismaClient;
  private readonly owner: string;
  private plan!: RedrivePlan;
  private adapter!: BrokerAdapter;
  private audit!: LetterAuditContext;
  /** Claims, moves and settles the letters; keeps the ledger's counts (batch-mover.ts). */
  private mover!: BatchMover;
  private bulkStartedAt: number | null = null;
  private bulkMovedAtStart = 0;
  private lastReturnCheck = 0;
  private lastRunnerCheck = 0;
  /** When this run started, and whether it took the job over from a holder that may still run. */
  private runStartedAt = 0;
  private tookOver = false;

  constructor(
    private readonly ctx: JobContext,
    private readonly d: RedriveDeps,
  ) {
    this.db = d.db();
    this.owner = ctx.job.leaseOwner ?? "";
  }

  async run(): Promise<JobOutcome> {
    const plan = await loadPlan(this.db, this.ctx.job.id);
    if (!plan) throw new AppError("internal:redrive", { userMessage: "This redrive has no plan; start a new one." });
    this.plan = plan;
    this.adapter = this.d.adapterFor(plan.connectionId);
    this.audit = {
      jobId: plan.jobId,
      connectionId: plan.connectionId,
      queue: plan.queue,
      actor: { id: plan.createdById, email: plan.createdByEmail, role: plan.createdByRole },
    };
    // Set when the plan repairs each letter it moves (group repair).
    const repair = (plan.repair as RedriveRepair | null) ?? null;
    this.mover = new BatchMover(
      this.db,
      this.ctx,
      this.d,
      plan,
      this.adapter,
      this.audit,
      repair ? new GroupRepair(this.db, plan, repair, this.audit) : null,
      (action, details, outcome) => this.operationAudit(action, details, outcome),
    );
    this.runStartedAt = this.d.clock.now();
    this.counts = await countStates(this.db, plan.jobId);
    try {
      // Before anything touches the broker. A cancel still runs: it only finishes what was moved.
      if (!this.ctx.job.cancelRequested) await this.checkRunners();
      await this.recoverInterrupted();
      await this.mover.removeLeftovers();
      await flushAudit(this.db, this.audit);
      this.mover.heldKeys = new Set(await failedKeys(this.db, plan.jobId));
      for (;;) {
        const stage = this.plan.stage as Stage;
        if (stage === "sample") await this.sample();
        else if (stage === "watching") await this.watch();
        else if (stage === "awaiting_bulk") return await this.pause(this.plan.pauseReason ?? this.verdictText());
        else if (stage === "bulk") await this.bulk();
        else return await this.finish("succeeded");
      }
    } catch (e) {
      if (e instanceof JobStop) return e.outcome;
      // Outcomes of the batch before the failure are written if they can be, and a batch claimed
      // ahead is given back; if not, those rows stay "moving" and the next run asks for them again
      // as "interrupted" (recoverInterrupted).
      await this.drainWrites().catch(() => undefined);
      await this.mover.releaseAhead().catch(() => undefined);
      if (e instanceof LeaseLostError) throw e;
      if (this.ctx.signal.aborted)
        throw consoleStopping("The console stopped; the redrive resumes from its ledger when a console runs again.");
      // The broker is away: pause (resumable) rather than fail, and say so.
      if (isBrokerAway(e)) {
        return this.pause(
          `Paused: ${e.userMessage} Letters not yet confirmed are still in the DLQ; the redrive resumes by itself once the broker answers again (or resume it then).`,
          true,
        );
      }
      // A queue not found or credentials refused: nothing moved in that step, and an operator can
      // put it right (or the broker's answer was a passing one): pause for them, do not fail the job.
      if (e instanceof BrokerError && (e.kind === "not_found" || e.kind === "auth")) {
        return this.pause(`Paused: ${e.userMessage} Resume once it is put right, or cancel.`);
      }
      throw e;
    }
  }

  /**
   * Rows still "moving" at the start belong to a run that ended without recording them: a process
   * that died, or one whose lease this run took over and that may still be finishing its batch
   * (its outcome write is refused now: the lease fence). Wait until that holder has surely let go
   * of its letters (it notices a lost lease within a third of the lease), then make what is still
   * "moving" "interrupted": asked for again first, in index order, before any later letter (see
   * ledger.ts, "Interrupted attempts").
   */
  private async recoverInterrupted() {
    if ((await countMoving(this.db, this.plan.jobId)) === 0) return;
    this.tookOver = true;
    const until = this.runStartedAt + this.graceMs();
    for (;;) {
      await this.control();
      const left = until - this.d.clock.now();
      if (left <= 0) break;
      await this.d.clock.sleep(Math.min(left, 1000), this.ctx.signal);
    }
    await interruptMoving(this.db, this.plan.jobId);
    this.counts = await countStates(this.db, this.plan.jobId);
  }

  /** The ledger's counts by state, as the batch mover keeps them. */
  private get counts() {
    return this.mover.counts;
  }

  private set counts(c: BatchMover["counts"]) {
    this.mover.counts = c;
  }

  private drainWrites(): Promise<void> {
    return this.mover.drainWrites();
  }

  /** Before a run pauses or ends: the last batch's writes, and the batch claimed ahead given back unmoved. */
  private async settleLedger(): Promise<void> {
    await this.drainWrites();
    await this.mover.releaseAhead();
  }

  /** One audit row about the whole operation (not a letter), in the name of the redrive's starter. */
  private operationAudit(action: string, details: Record<string, unknown>, outcome: AuditOutcome = "success") {
    return recordAudit({
      actor: this.audit.actor as never,
      action,
      outcome,
      operationId: this.plan.jobId,
      connectionId: this.plan.connectionId,
      queue: this.plan.queue,
      target: this.plan.jobId,
      details,
    });
  }

  /**
   * How long a previous holder of the lease may still hold letters after this run took the job
   * over: a holder whose lease ran out learns it at its next heartbeat (every third of the lease),
   * aborts, stops between letters and settles its in-flight confirms (their letters stay invisible
   * in the DLQ until then); a second is left for that last part. It writes nothing to the ledger
   * any more: its claims and outcome writes are fenced by the lease (ledger.ts, holdsLease), so its
   * batch stays "moving" and is asked for again here. (A holder cut off from Postgres but not from
   * the broker is not bounded by any wait: leases cannot fence the broker.)
   */
  private graceMs(): number {
    const lease = Math.max(0, (this.ctx.job.leaseExpiresAt?.getTime() ?? 0) - Date.now());
    return this.d.verifyGraceMs ?? Math.min(120_000, Math.max(1000, Math.round(lease / 3) + 1000));
  }

  // ---- stages -------------------------------------------------------------------------------

  private async sample() {
    await assignSample(this.db, this.plan.jobId, this.plan.sampleSize);
    this.counts = await countStates(this.db, this.plan.jobId);
    // The sample goes at the job's rate too: the rate is what the consumer can take, sample or not.
    const bucket = new TokenBucket(this.plan.rate, this.d.clock);
    const size = Math.min(this.d.sampleBatch, batchSizeFor(this.plan.rate));
    this.mover.startStage();
    for (;;) {
      await this.control();
      const rows = await this.mover.claimInOrder(bucket, size, this.counts.samplePending, (limit, afterSeq) =>
        claimNext(this.db, this.plan.jobId, "sample", limit, this.owner, afterSeq),
      );
      if (rows.length === 0) break;
      this.counts.samplePending = Math.max(0, this.counts.samplePending - rows.length);
      await this.mover.moveBatch(rows, "sample");
    }
    // Each target as it stands now that the copies are confirmed there: kept with the job, so a
    // restarted watch judges against the same marks (sample-watch.ts).
    const targets = await sampleTargets(this.db, this.plan, this.mover.sampleCopies);
    const sampleWatch = { marks: await takeMarks(this.adapter, targets), evidence: null };
    const watchUntil = new Date(this.d.clock.now() + this.plan.watchSeconds * 1000);
    await startWatching(this.db, this.plan.jobId, watchUntil, sampleWatch);
    this.plan = {
      ...this.plan,
      stage: "watching",
      watchUntil,
      sampleWatch: sampleWatch as unknown as RedrivePlan["sampleWatch"],
    };
  }

  private async watch() {
    const until = this.plan.watchUntil?.getTime() ?? this.d.clock.now();
    for (;;) {
      await this.control();
      const left = until - this.d.clock.now();
      if (left <= 0) break;
      await this.d.clock.sleep(Math.min(left, this.d.returnCheckMs, 5000), this.ctx.signal);
      if (this.d.clock.now() - this.lastReturnCheck >= this.d.returnCheckMs) await this.checkReturns();
    }
    await this.checkReturns();
    const returned = this.counts.sampleReturned;
    // Clean only when a reader took the copies: none coming back from a target nobody reads proves nothing.
    const marks = sampleWatchOf(this.plan.sampleWatch)?.marks ?? [];
    const evidence = await gatherEvidence(this.adapter, marks);
    const verdict = decideVerdict(returned, evidence);
    const record = { marks, evidence };
    await recordVerdict(this.db, this.plan.jobId, { verdict, returned, record });
    this.plan = {
      ...this.plan,
      stage: "awaiting_bulk",
      sampleVerdict: verdict,
      sampleReturned: returned,
      sampleWatch: record as unknown as RedrivePlan["sampleWatch"],
    };
    const reason = this.verdictText();
    await this.operationAudit("redrive.sample_verdict", {
      verdict,
      returned,
      sample: this.counts.sample,
      watchSeconds: this.plan.watchSeconds,
      evidence,
      text: reason,
    });
    await this.pause(reason);
  }

  private async bulk() {
    const bucket = new TokenBucket(this.plan.rate, this.d.clock);
    const size = batchSizeFor(this.plan.rate);
    this.bulkStartedAt = this.d.clock.now();
    this.bulkMovedAtStart = this.done();
    this.lastReturnCheck = this.d.clock.now();
    this.mover.startStage();
    const claim = (limit: number, afterSeq: number) =>
      claimNext(this.db, this.plan.jobId, "bulk", limit, this.owner, afterSeq);
    const left = () => this.counts.pending + this.counts.interrupted;
    for (;;) {
      await this.control();
      if (this.d.clock.now() - this.lastReturnCheck >= this.d.returnCheckMs) await this.checkBreaker();
      const rows = (await this.mover.takeAhead()) ?? (await this.mover.claimInOrder(bucket, size, left(), claim));
      if (rows.length === 0) break;
      // The next batch is claimed while this one moves (moveBatch has counted this one as moving).
      const moving = this.mover.moveBatch(rows, "bulk", true);
      if (left() > 0) this.mover.claimAhead(bucket, size, left(), claim);
      await moving;
    }
    await this.drainWrites();
    await this.verifyMissing(bucket, size);
    await this.checkBreaker();
    await setStage(this.db, this.plan.jobId, "done", {}, this.owner);
    this.plan = { ...this.plan, stage: "done" };
  }

  /**
   * Final verification before the job can finish: letters reported "missing" or "unconfirmed", and
   * "failed" ones that were out of reach (`MoveResult.retryLater`: hidden by another reader, not
   * reached by the look), are asked for again. Not being in the DLQ is only final when the letter really is gone; a run that
   * took the job over while the previous holder still had letters unacked (RabbitMQ: invisible to
   * other readers), or that asked right after an interruption, before the broker had requeued the
   * dead connection's letters, sees them as gone although they come back. So: the first pass no
   * sooner than a settling delay (the grace) after the last letter found "unconfirmed"; after a
   * takeover, passes until the previous holder has surely stopped; and again while a pass still
   * finds letters. Paced by the job's token bucket. A letter found again moves now (or fails with
   * its reason, staying in the DLQ). Then what is still "unconfirmed" is recorded as moved
   * ("confirmed after restart", ledger.ts "Interrupted attempts").
   */
  private async verifyMissing(bucket: TokenBucket, size: number) {
    const deadline = this.tookOver ? this.runStartedAt + this.graceMs() : 0;
    // "failed" letters out of reach then (hidden by another reader, not reached) are asked for again too.
    const gone = () => this.counts.missing + this.counts.unconfirmed + this.counts.retryLater;
    let recovered = 0;
    for (let pass = 0; pass < 8 && gone() > 0; pass++) {
      if (pass === 0 && this.counts.unconfirmed > 0 && this.mover.lastUnconfirmedAt > 0) {
        const settle = this.mover.lastUnconfirmedAt + this.graceMs() - this.d.clock.now();
        if (settle > 0) await this.d.clock.sleep(settle, this.ctx.signal);
      }
      if (pass > 0) {
        const wait = deadline - this.d.clock.now();
        if (wait <= 0 && recovered === 0) break;
        await this.d.clock.sleep(Math.max(250, wait), this.ctx.signal);
      }
      const before = gone();
      let afterSeq = 0;
      for (;;) {
        await this.control();
        const rows = await this.mover.pacedClaim(bucket, size, gone(), (limit) =>
          claimMissing(this.db, this.plan.jobId, afterSeq, limit, this.owner),
        );
        if (rows.length === 0) break;
        afterSeq = rows[rows.length - 1].seq;
        await this.mover.moveBatch(rows, "bulk", false, new Map(rows.map((r) => [r.letterId, r.reason])));
      }
      recovered = before - gone();
    }
    const parking = this.plan.parking as Parking;
    if (
      (await confirmUnconfirmed(
        this.db,
        this.plan.jobId,
        this.plan.redriveLimit,
        parking.kind === "queue",
        this.owner,
      )) > 0
    )
      await flushAudit(this.db, this.audit);
    // The previous holder may have written outcomes meanwhile: the ledger's counts are the truth.
    this.counts = await countStates(this.db, this.plan.jobId);
  }

  // ---- returns and the breaker --------------------------------------------------------------

  private async checkReturns() {
    await this.drainWrites();
    this.lastReturnCheck = this.d.clock.now();
    const found = await findReturns(this.adapter, this.plan.queue, this.plan.jobId, {
      acceptRisk: this.plan.acceptRisk,
      signal: this.ctx.signal,
    });
    const n = await markReturned(this.db, this.plan.jobId, found.replayIds, this.owner);
    if (n > 0) {
      this.counts = await countStates(this.db, this.plan.jobId);
      await flushAudit(this.db, this.audit);
    }
    this.lastReturnCheck = this.d.clock.now();
    await this.ctx.checkpoint({ progress: this.progress() });
  }

  private async checkBreaker() {
    await this.checkReturns();
    const w = await breakerWindow(this.db, this.plan.jobId, this.plan.breakerWindow, this.plan.breakerResetAt);
    const v = breakerVerdict(w, {
      threshold: this.plan.breakerThreshold,
      window: this.plan.breakerWindow,
      minLetters: this.plan.breakerMinLetters,
    });
    if (v.trip) {
      await this.operationAudit("redrive.auto_pause", {
        breaker: true,
        redriven: w.redriven,
        returned: w.returned,
        share: v.share,
        threshold: this.plan.breakerThreshold,
      });
      throw new JobStop(await this.pause(v.reason!));
    }
  }

  // ---- control, progress, ends --------------------------------------------------------------

  /** Between batches: saves progress, extends the lease, honours cancel and pause requests. */
  private async control() {
    const r = await betweenBatches(
      this.ctx,
      this.progress(),
      "The console stopped; the redrive resumes from its ledger.",
    );
    if (r.cancelRequested) throw new JobStop(await this.finish("cancelled"));
    const p = await this.db.redrivePlan.findUnique({
      where: { jobId: this.plan.jobId },
      select: { pauseRequested: true, pauseReason: true },
    });
    if (p?.pauseRequested) throw new JobStop(await this.pause(p.pauseReason ?? "Paused by an operator."));
    if (this.d.clock.now() - this.lastRunnerCheck >= this.d.runnerCheckMs) await this.checkRunners();
  }

  /** The users this job acts for may still run it, and its destinations are still allowed; else it pauses (audited) and stops. */
  private async checkRunners() {
    this.lastRunnerCheck = this.d.clock.now();
    if (this.plan.stage === "awaiting_bulk" || this.plan.stage === "done") return; // nothing moves or reads
    const job = await this.db.job.findUnique({ where: { id: this.plan.jobId }, select: { params: true } });
    const refusal = await runnerRefusal(this.plan, job?.params ?? null, this.adapter);
    if (!refusal) return;
    await this.drainWrites();
    await auditRefusal(this.plan, refusal, "redrive.auto_pause");
    throw new JobStop(await this.pause(refusal.reason));
  }

  /** `autoResume`: the broker went away; resumeReachable (auto-resume.ts) resumes it once the broker answers. */
  private async pause(reason: string, autoResume = false): Promise<JobOutcome> {
    await this.settleLedger();
    const ok = await pauseSelf(this.db, this.plan.jobId, this.owner, reason, { ...this.progress(reason), autoResume });
    if (ok) {
      // The job is `paused` now; the worker's finish() finds no running job and changes nothing.
      return { state: "succeeded" };
    }
    const job = await this.db.job.findUnique({ where: { id: this.plan.jobId }, select: { cancelRequested: true } });
    if (job?.cancelRequested) return this.finish("cancelled");
    throw new LeaseLostError(this.plan.jobId);
  }

  private async finish(state: "succeeded" | "cancelled"): Promise<JobOutcome> {
    await this.settleLedger();
    return finishLedgerJob(this.audit, "redrive.finished", state, this.progress(), this.result());
  }

  /** What the job did with its selection, from the ledger's counts: "2 moved, 1 failed and still in the DLQ". */
  private result(): JobResult {
    return redriveResult(this.counts);
  }

  private done(): number {
    const c = this.counts;
    return c.moved + c.unconfirmed + c.failed + c.missing + c.checksum_mismatch + c.parked + c.skipped + c.returned;
  }

  /** The plan's verdict in words, with the evidence per target (sample-verdict.ts). */
  private verdictText(): string {
    return verdictSentence({
      verdict: (this.plan.sampleVerdict ?? "inconclusive") as SampleVerdict,
      returned: this.plan.sampleReturned,
      size: this.counts.sample,
      watchSeconds: this.plan.watchSeconds,
      evidence: sampleWatchOf(this.plan.sampleWatch)?.evidence ?? [],
    });
  }

  private progress(pauseReason?: string): JobProgress {
    const c = this.counts;
    const done = this.done();
    let rate = 0;
    let eta: number | null = null;
    if (this.bulkStartedAt !== null) {
      ({ rate, eta } = pace({
        done,
        doneAtStart: this.bulkMovedAtStart,
        seconds: (this.d.clock.now() - this.bulkStartedAt) / 1000,
        left: c.pending + c.interrupted + c.moving,
        fallbackRate: this.plan.rate,
      }));
    }
    return {
      stage: this.plan.stage,
      read: done,
      total: this.plan.total,
      redriven: c.moved + c.returned,
      moved: c.moved,
      failed: c.failed + c.checksum_mismatch,
      checksumMismatch: c.checksum_mismatch,
      missing: c.missing,
      unconfirmed: c.unconfirmed,
      skipped: c.skipped,
      parked: c.parked,
      returned: c.returned,
      pending: c.pending + c.interrupted,
      sample: {
        size: c.sample,
        returned: c.sampleReturned,
        verdict: this.plan.sampleVerdict,
        evidence: sampleWatchOf(this.plan.sampleWatch)?.evidence ?? null,
        watchUntil: this.plan.watchUntil?.toISOString() ?? null,
      },
      targetRate: this.plan.rate,
      rate,
      eta,
      pauseReason: pauseReason ?? null,
    };
  }
}
