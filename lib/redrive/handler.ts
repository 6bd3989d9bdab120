import "server-only";
import { createHash, randomUUID } from "node:crypto";
import { recordAudit, recordAuditBatch, type AuditEntry, type AuditOutcome } from "@/lib/audit";
import { writeArchive } from "@/lib/archive/store";
import { isRole } from "@/lib/auth/permissions";
import { getUserByEmail } from "@/lib/auth/users";
import { getAdapter } from "@/lib/connections/registry";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveRequest, MoveResult, RedriveTarget } from "@/lib/brokers/contract/move";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient, RedrivePlan } from "@/lib/generated/prisma/client";
import { resultOutcome, type JobResult } from "@/lib/jobs/accounting";
import { redriveResult } from "./result";
import { creatorRefusal } from "@/lib/jobs/creator";
import { LeaseLostError } from "@/lib/jobs/store";
import type { JobContext, JobHandler, JobOutcome, JobProgress } from "@/lib/jobs/types";
import { payloadDiff } from "@/lib/repair/diff";
import {
  assertRepairAllowed,
  auditDiffMasking,
  indexedPayloads,
  patchIndexed,
  type LetterPatch,
} from "@/lib/repair/group";
import { breakerVerdict } from "./breaker";
import { realClock, type Clock } from "./clock";
import { loadPlan, pauseSelf, setStage } from "./control";
import {
  assignSample,
  breakerWindow,
  countStates,
  flushAudit,
  claimNext,
  claimMissing,
  confirmUnconfirmed,
  countMoving,
  failedKeys,
  clearLeftoverCheck,
  interruptMoving,
  leftoverRows,
  markLeftoverCheck,
  markReturned,
  recordOutcomes,
  settledOf,
  type LedgerRow,
  type LetterAuditContext,
  type Settled,
} from "./ledger";
import type { Parking, RedriveRepair, Stage } from "./plan";
import { findReturns, markersOf } from "./returns";
import { decideVerdict, sampleWatchOf, verdictSentence, type SampleVerdict } from "./sample-verdict";
import { gatherEvidence, recordVerdict, sampleTargets, startWatching, takeMarks } from "./sample-watch";
import { auditRefusal, runnerRefusal, type RunnerRefusal } from "./runner-check";
import { TokenBucket, batchSizeFor, moveWindowFor } from "./token-bucket";

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

/** The broker cannot be reached or is busy: nothing about a letter, resumable. */
function isBrokerAway(e: unknown): e is BrokerError {
  return e instanceof BrokerError && (e.kind === "unreachable" || e.kind === "throttled");
}

/** The promise's value, or null when it has not settled within `ms` (its rejection passes through). */
async function raceTimeout<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

class Stop extends Error {
  constructor(readonly outcome: JobOutcome) {
    super("stop");
  }
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
  /** Set when the plan repairs each letter it moves (group repair). */
  private repair: RedriveRepair | null = null;
  private adapter!: BrokerAdapter;
  private audit!: LetterAuditContext;
  private counts!: Awaited<ReturnType<typeof countStates>>;
  private bulkStartedAt: number | null = null;
  private bulkMovedAtStart = 0;
  private lastReturnCheck = 0;
  private lastRunnerCheck = 0;
  /** When this run started, and whether it took the job over from a holder that may still run. */
  private runStartedAt = 0;
  private tookOver = false;
  /** When a letter was last found not in the DLQ after an interrupted attempt (0: not in this run). */
  private lastUnconfirmedAt = 0;
  /** Ordering keys of letters that failed earlier in this job: their later letters are held back (MoveOptions.heldKeys). */
  private heldKeys = new Set<string>();
  /** The previous bulk batch's ledger and audit writes, running while the next batch moves. */
  private writing: Promise<void> | null = null;
  /** Where this run's sample moves put each copy (`MoveResult.target`), by letter id: the targets the watch marks. */
  private sampleCopies = new Map<string, string>();

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
    this.repair = (plan.repair as RedriveRepair | null) ?? null;
    this.adapter = this.d.adapterFor(plan.connectionId);
    this.audit = {
      jobId: plan.jobId,
      connectionId: plan.connectionId,
      queue: plan.queue,
      actor: { id: plan.createdById, email: plan.createdByEmail, role: plan.createdByRole },
    };
    this.runStartedAt = this.d.clock.now();
    this.counts = await countStates(this.db, plan.jobId);
    try {
      // Before anything touches the broker. A cancel still runs: it only finishes what was moved.
      if (!this.ctx.job.cancelRequested) await this.checkRunners();
      await this.recoverInterrupted();
      await this.removeLeftovers();
      await flushAudit(this.db, this.audit);
      this.heldKeys = new Set(await failedKeys(this.db, plan.jobId));
      for (;;) {
        const stage = this.plan.stage as Stage;
        if (stage === "sample") await this.sample();
        else if (stage === "watching") await this.watch();
        else if (stage === "awaiting_bulk") return await this.pause(this.plan.pauseReason ?? this.verdictText());
        else if (stage === "bulk") await this.bulk();
        else return await this.finish("succeeded");
      }
    } catch (e) {
      if (e instanceof Stop) return e.outcome;
      // Outcomes of the batch before the failure are written if they can be; if not, those rows
      // stay "moving" and the next run asks for them again as "interrupted" (recoverInterrupted).
      await this.drainWrites().catch(() => undefined);
      if (e instanceof LeaseLostError) throw e;
      if (this.ctx.signal.aborted)
        throw new AppError("unavailable:stopping", {
          userMessage: "The console stopped; the redrive resumes from its ledger when a console runs again.",
        });
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
   * that died, or one whose lease this run took over and that may still be finishing its batch.
   * Wait until that holder has surely stopped (it notices a lost lease within a third of the lease
   * and writes its batch's outcomes), then make what is still "moving" "interrupted": asked for
   * again first, in index order, before any later letter (see ledger.ts, "Interrupted attempts").
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

  /**
   * Letters recorded moved (or parked to a queue) by a batch whose connection then broke: their
   * copy at the target is confirmed, but the DLQ copy's removal may have been lost with the
   * connection (AMQP 0-9-1 never confirms an ack: acks sent just before RabbitMQ stopped were lost,
   * and those letters were back in the DLQ). Each one still in the DLQ is removed now, through the
   * adapter's removeLetters (checksum checked); a copy carrying this job's redrive id is a letter
   * that came back after the redrive, not a leftover, and stays. Found or not, the flag is cleared;
   * a broker still away throws (the job pauses again and the flags stay for the next run).
   */
  private async removeLeftovers() {
    const rows = await leftoverRows(this.db, this.plan.jobId);
    if (rows.length === 0) return;
    const removed: string[] = [];
    const kept: string[] = [];
    if (this.adapter.removeLetters) {
      const jobId = this.plan.jobId;
      const results = this.adapter.removeLetters(
        this.plan.queue,
        rows.map((r) => ({ letterId: r.letterId, sha256: r.sha256 })),
        {
          operationId: jobId,
          acceptRisk: this.plan.acceptRisk,
          signal: this.ctx.signal,
          // A letter known only by its content could be answered by an identical twin that was never moved.
          ownIdentityOnly: true,
          beforeRemove: async ({ letter }) => {
            if (markersOf(letter.headers, letter.properties).redriveId === jobId)
              throw new Error("a copy this job redrove that came back: not a leftover");
          },
        },
      );
      for await (const r of results) {
        if (r.outcome === "removed") removed.push(r.letterId);
        else if (r.contentIdentified) kept.push(r.letterId);
      }
    }
    await clearLeftoverCheck(
      this.db,
      this.plan.jobId,
      rows.map((r) => r.letterId),
      removed,
      kept,
    );
    if (removed.length > 0) {
      await this.operationAudit("redrive.leftovers_removed", {
        removed: removed.length,
        checked: rows.length,
        letterIds: removed,
      });
    }
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
   * How long a previous holder of the lease may still write after this run took the job over: a
   * holder whose lease ran out learns it at its next heartbeat (every third of the lease), aborts,
   * stops between letters, settles its in-flight confirms and writes its batch; a second is left
   * for that last part. (A holder cut off from Postgres but not from the broker is not bounded by
   * any wait: leases cannot fence the broker.)
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
    for (;;) {
      await this.control();
      const rows = await this.pacedClaim(bucket, size, this.counts.samplePending, (limit) =>
        claimNext(this.db, this.plan.jobId, "sample", limit),
      );
      if (rows.length === 0) break;
      this.counts.samplePending = Math.max(0, this.counts.samplePending - rows.length);
      await this.moveBatch(rows, "sample");
    }
    // Each target as it stands now that the copies are confirmed there: kept with the job, so a
    // restarted watch judges against the same marks (sample-watch.ts).
    const targets = await sampleTargets(this.db, this.plan, this.sampleCopies);
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
    for (;;) {
      await this.control();
      if (this.d.clock.now() - this.lastReturnCheck >= this.d.returnCheckMs) await this.checkBreaker();
      const rows = await this.pacedClaim(bucket, size, this.counts.pending + this.counts.interrupted, (limit) =>
        claimNext(this.db, this.plan.jobId, "bulk", limit),
      );
      if (rows.length === 0) break;
      await this.moveBatch(rows, "bulk", true);
    }
    await this.drainWrites();
    await this.verifyMissing(bucket, size);
    await this.checkBreaker();
    await setStage(this.db, this.plan.jobId, "done");
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
      if (pass === 0 && this.counts.unconfirmed > 0 && this.lastUnconfirmedAt > 0) {
        const settle = this.lastUnconfirmedAt + this.graceMs() - this.d.clock.now();
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
        const rows = await this.pacedClaim(bucket, size, gone(), (limit) =>
          claimMissing(this.db, this.plan.jobId, afterSeq, limit),
        );
        if (rows.length === 0) break;
        afterSeq = rows[rows.length - 1].seq;
        await this.moveBatch(rows, "bulk", false, new Map(rows.map((r) => [r.letterId, r.reason])));
      }
      recovered = before - gone();
    }
    const parking = this.plan.parking as Parking;
    if ((await confirmUnconfirmed(this.db, this.plan.jobId, this.plan.redriveLimit, parking.kind === "queue")) > 0)
      await flushAudit(this.db, this.audit);
    // The previous holder may have written outcomes meanwhile: the ledger's counts are the truth.
    this.counts = await countStates(this.db, this.plan.jobId);
  }

  // ---- moving -------------------------------------------------------------------------------

  /**
   * Claims up to `size` letters once the bucket lets them go. Paced before the claim, so that
   * claimed rows are not left "moving" while the bucket waits, and for the letters the counts say
   * are left (`expected`), so that the claim that finds nothing costs no wait at the end. Should
   * the claim find more than the counts said, the extra letters are paid for before they move.
   */
  private async pacedClaim(
    bucket: TokenBucket,
    size: number,
    expected: number,
    claim: (limit: number) => Promise<LedgerRow[]>,
  ): Promise<LedgerRow[]> {
    const n = Math.max(0, Math.min(size, expected));
    if (n > 0) await bucket.take(n, this.ctx.signal);
    const rows = await claim(n > 0 ? n : size);
    if (rows.length > n) await bucket.take(rows.length - n, this.ctx.signal);
    return rows;
  }

  /**
   * Moves claimed rows (state "moving", replay ids assigned by the claim). With `overlap`, the
   * batch's ledger and audit writes run while the next batch is claimed and moved (awaited before
   * that batch's own writes, and before any check, pause or end that reads the ledger).
   *
   * When the broker goes away during the batch (the move throws an unreachable/throttled error, or
   * it ended with letters failed or not found and the broker does not answer a ping right after),
   * those letters are not the letters' fault: "failed" and "missing" go back to "pending" with the
   * reason, and are asked for again when the job resumes; a letter-specific failure (unroutable,
   * refused, checksum) on a reachable broker stays "failed". Letters the move never reported on
   * when it threw are "interrupted" (their outcome is unknown). Outcomes reported before the error
   * are recorded as they are. Then the error is thrown: the run pauses with the broker's reason.
   */
  private async moveBatch(
    rows: LedgerRow[],
    stage: "sample" | "bulk",
    overlap = false,
    missingReasons?: Map<string, string | null>,
  ) {
    for (const r of rows) {
      const from = r.prevState ?? "pending";
      this.counts[from] = Math.max(0, this.counts[from] - 1);
      // Only the verification pass claims a failed letter: one to ask for again (claimMissing).
      if (from === "failed") this.counts.retryLater = Math.max(0, this.counts.retryLater - 1);
    }
    this.counts.moving += rows.length;
    const byId = new Map(rows.map((r) => [r.letterId, r]));
    const park = rows.filter((r) => r.prevCount >= this.plan.redriveLimit);
    const move = rows.filter((r) => r.prevCount < this.plan.redriveLimit);

    const request = (r: LedgerRow, target: RedriveTarget, count: number): MoveRequest => ({
      letterId: r.letterId,
      sha256: r.sha256,
      target,
      markers: {
        redriveId: this.plan.jobId,
        replayId: r.replayId ?? randomUUID(),
        redriveCount: count,
        originalMessageId: r.originalMessageId,
      },
    });
    const settled: Settled[] = [];
    let broken: unknown = null;
    let brokerAway = false;
    // A repairing redrive patches each letter's indexed payload (whose SHA-256 the mover checks
    // against the broker's copy); a letter the patch does not apply to is not moved at all.
    const patches = this.repair && move.length > 0 ? await this.patchesFor(move) : null;
    const archived = new Map<string, string>();
    const copyIds = new Map<string, string>();
    let toMove = move;
    // Not the broker's doing: kept apart from the move's outcomes until the broker checks are done.
    const notApplied: Settled[] = [];
    const notRepaired = (reason: string) => `Not repaired: ${reason} It stays in the DLQ.`;
    // On an ordered stream (Kafka keys, FIFO groups) a letter the patch does not fit goes to the
    // adapter as a refusal in its place (LetterRepair.refuse): it fails there, in DLQ order, and its
    // key is held back, so no later letter of that key overtakes it. Elsewhere it is not sent at all.
    const inPlace = this.adapter.capabilities.orderedKeys;
    if (patches && !inPlace) {
      toMove = move.filter((r) => patches.get(r.letterId)!.ok);
      for (const r of move) {
        const pt = patches.get(r.letterId)!;
        if (!pt.ok)
          notApplied.push({
            letterId: r.letterId,
            state: "failed",
            destination: null,
            reason: notRepaired(pt.reason),
            orderingKey: r.orderingKey,
          });
      }
    }

    try {
      if (park.length > 0) {
        const parking = this.plan.parking as Parking;
        const why = (r: LedgerRow) =>
          `Redriven ${r.prevCount} times already (limit ${this.plan.redriveLimit}): parked instead of cycling again.`;
        if (parking.kind === "mark") {
          for (const r of park)
            settled.push({
              letterId: r.letterId,
              state: "parked",
              destination: "left in the DLQ (marked parked)",
              reason: why(r),
              orderingKey: null,
            });
        } else {
          const reqs = park.map((r) => request(r, { kind: "queue", name: parking.name }, r.prevCount));
          for await (const res of this.move(reqs)) {
            const s = settledOf(res, "parked", byId.get(res.letterId));
            settled.push(
              s.state === "parked" && res.outcome === "moved" ? { ...s, reason: why(byId.get(res.letterId)!) } : s,
            );
          }
        }
      }
      if (toMove.length > 0) {
        const target = this.plan.target as RedriveTarget;
        const reqs = toMove.map((r) => {
          const req = request(r, target, r.prevCount + 1);
          const pt = patches?.get(r.letterId);
          if (pt?.ok) req.repair = { ...(pt.changed ? { body: pt.bytes } : {}), operationId: this.plan.jobId };
          else if (pt) req.repair = { operationId: this.plan.jobId, refuse: notRepaired(pt.reason) };
          return req;
        });
        const beforeRemove = patches ? (copy: LetterCopy) => this.archiveOriginal(copy, archived) : undefined;
        for await (const res of this.move(reqs, beforeRemove)) {
          if (res.copyId) copyIds.set(res.letterId, res.copyId);
          if (stage === "sample" && res.outcome === "moved" && res.target)
            this.sampleCopies.set(res.letterId, res.target);
          settled.push(settledOf(res, "moved", byId.get(res.letterId)));
        }
      }
    } catch (e) {
      broken = e;
      brokerAway = isBrokerAway(e);
    }
    if (!broken && settled.some((s) => s.state === "failed" || s.state === "missing" || s.state === "unconfirmed")) {
      // Failures on a broker that has just gone away are not the letters' fault: ask it.
      try {
        await this.adapter.ping();
      } catch (e) {
        broken = isBrokerAway(e)
          ? e
          : new BrokerError("unreachable", {
              cause: e,
              userMessage: "The broker did not answer the console's check after letters failed.",
            });
        brokerAway = true;
      }
    }
    if (brokerAway) {
      const why = (broken as BrokerError).userMessage;
      for (const s of settled) {
        if (s.state === "unconfirmed") {
          // Not found while the broker was going away says nothing: still an interrupted attempt.
          Object.assign(s, { state: "interrupted", reason: null, destination: null });
          continue;
        }
        if (s.state !== "failed" && s.state !== "missing") continue;
        s.reason = `Not confirmed: the broker could not be reached during the attempt (${why}) It is still in the DLQ and is tried again when the job resumes; a copy that reached the target unconfirmed carries the same replay id.`;
        s.state = "pending";
        s.destination = null;
      }
    }
    settled.push(...notApplied);
    if (missingReasons) {
      // Asked again in the verification pass and still not there: keep the reason it had.
      for (const s of settled)
        if (s.state === "missing" && missingReasons.get(s.letterId)) s.reason = missingReasons.get(s.letterId)!;
    }
    // Every claimed row gets a state: letters the move did not report on are "interrupted" when it
    // threw (outcome unknown), else back where they were (it stopped before them: nothing was sent).
    // A refusal before any result (queue not found, bad request, risky read, credentials: what
    // the adapter contract checks before anything moves) sent nothing either.
    const upFront =
      settled.length === 0 &&
      broken instanceof BrokerError &&
      ["not_found", "bad_request", "risky_read", "auth"].includes(broken.kind);
    const reported = new Set(settled.map((s) => s.letterId));
    for (const r of rows) {
      if (reported.has(r.letterId)) continue;
      const unknown = broken !== null && !upFront;
      settled.push({
        letterId: r.letterId,
        state: unknown ? "interrupted" : (r.prevState ?? "pending"),
        destination: null,
        reason: unknown ? null : r.reason,
        orderingKey: null,
      });
    }
    this.counts.moving = Math.max(0, this.counts.moving - rows.length);
    if (settled.some((x) => x.state === "unconfirmed")) this.lastUnconfirmedAt = this.d.clock.now();
    for (const s of settled) {
      this.counts[s.state]++;
      if (s.state === "failed" && s.retryLater) this.counts.retryLater++;
      if ((s.state === "failed" || s.state === "checksum_mismatch") && s.orderingKey !== null)
        this.heldKeys.add(s.orderingKey);
    }
    await this.drainWrites();
    const repairedRows = patches ? await this.repairedAudit(move, patches, settled, { archived, copyIds }) : [];
    const write = (async () => {
      // Before the outcomes: a crash in between writes these rows again on resume (a duplicate, never a gap).
      if (repairedRows.length > 0) await recordAuditBatch(repairedRows);
      await recordOutcomes(this.db, this.plan.jobId, settled);
      await flushAudit(this.db, this.audit);
    })();
    if (broken) {
      await write;
      // The move broke off: where the broker never confirms removals (RabbitMQ acks), acks it sent
      // for letters it reported moved may have been lost with the connection, leaving their DLQ
      // copy in place. The next run looks for those (removeLeftovers).
      if (this.adapter.capabilities.removalUnconfirmed) {
        const parkedAway = (this.plan.parking as Parking).kind !== "mark";
        await markLeftoverCheck(
          this.db,
          this.plan.jobId,
          settled.filter((x) => x.state === "moved" || (parkedAway && x.state === "parked")).map((x) => x.letterId),
        );
      }
      throw broken;
    }
    if (!overlap) return write;
    write.catch(() => undefined); // observed here; the error surfaces at drainWrites
    this.writing = write;
  }

  private async drainWrites(): Promise<void> {
    const w = this.writing;
    this.writing = null;
    if (w) await w;
  }

  private move(reqs: MoveRequest[], beforeRemove?: (copy: LetterCopy) => Promise<void>): AsyncIterable<MoveResult> {
    const heldKeys = this.heldKeys.size > 0 ? [...this.heldKeys] : undefined;
    return this.watched(
      this.adapter.moveLetters!(this.plan.queue, reqs, {
        signal: this.ctx.signal,
        acceptRisk: this.plan.acceptRisk,
        heldKeys,
        maxInFlight: moveWindowFor(this.plan.rate),
        ...(beforeRemove ? { beforeRemove } : {}),
      }),
    );
  }

  // ---- repair (a redrive whose plan carries `repair`) ---------------------------------------

  /** The plan's patch applied to each row's indexed payload, by letter id. */
  private async patchesFor(rows: LedgerRow[]): Promise<Map<string, LetterPatch>> {
    const { connectionId, queue } = this.plan;
    const indexed = await indexedPayloads(
      connectionId,
      queue,
      rows.map((r) => r.letterId),
    );
    const out = new Map<string, LetterPatch>();
    for (const r of rows) {
      const p = indexed.get(r.letterId);
      // The ledger's checksum is the one the mover verifies: the patched payload must be of those bytes.
      if (!p)
        out.set(r.letterId, {
          ok: false,
          reason: "The letter is no longer in the triage index: scan the DLQ again, then retry.",
        });
      else out.set(r.letterId, patchIndexed(connectionId, queue, { ...p, sha256: r.sha256 }, this.repair!.patch));
    }
    return out;
  }

  /**
   * The original goes to the encrypted archive (under the job's id, with the stated reason) after
   * its repaired copy was confirmed and before it leaves the DLQ; a failed write keeps it there.
   */
  private async archiveOriginal(copy: LetterCopy, archived: Map<string, string>): Promise<void> {
    const ctx = {
      jobId: this.plan.jobId,
      connectionId: this.plan.connectionId,
      queue: this.plan.queue,
      reason: `Repaired and resubmitted: ${this.repair!.reason}`,
      actor: this.audit.actor,
    };
    try {
      archived.set(copy.letterId, await writeArchive(this.db, ctx, copy));
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw new AppError("unavailable:archive", {
        userMessage:
          "Its archive copy could not be written (database error), so the original was not removed: it stays in the DLQ.",
        cause: e,
      });
    }
  }

  /**
   * One `letter.repaired` row per letter this batch tried to repair and settled (moved, or failed
   * with its reason; letters handed back because the broker went away get theirs when tried
   * again): the diff masked for every audit reader, SHA-256 before and after, the copy and archive
   * ids, under the job's operation id, in the name of the redrive's starter.
   */
  private async repairedAudit(
    rows: LedgerRow[],
    patches: Map<string, LetterPatch>,
    settled: Settled[],
    ids: { archived: Map<string, string>; copyIds: Map<string, string> },
  ): Promise<AuditEntry[]> {
    const byId = new Map(settled.map((s) => [s.letterId, s]));
    const final = rows.filter((r) =>
      ["moved", "failed", "missing", "checksum_mismatch"].includes(byId.get(r.letterId)?.state ?? ""),
    );
    if (final.length === 0) return [];
    const mask = await auditDiffMasking(this.plan.connectionId, this.plan.queue);
    return final.map((r) => {
      const s = byId.get(r.letterId)!;
      const pt = patches.get(r.letterId)!;
      const moved = s.state === "moved";
      const after = pt.ok ? (pt.changed ? pt.bytes : pt.before) : null;
      return {
        actor: {
          id: this.audit.actor.id,
          email: this.audit.actor.email,
          role: isRole(this.audit.actor.role) ? this.audit.actor.role : null,
        },
        action: "letter.repaired",
        outcome: moved ? "success" : "failure",
        operationId: this.plan.jobId,
        scope: "letter",
        connectionId: this.plan.connectionId,
        queue: this.plan.queue,
        target: r.letterId,
        details: {
          outcome: s.state,
          reason: moved ? null : s.reason,
          repairReason: this.repair!.reason,
          messageId: r.messageId,
          sha256: r.sha256,
          afterSha256: after ? createHash("sha256").update(after).digest("hex") : null,
          diff: pt.ok
            ? {
                payload: payloadDiff(pt.before, pt.changed ? pt.bytes : null, "json", mask),
                headers: [],
                newCorrelationId: false,
              }
            : null,
          copyId: moved ? (ids.copyIds.get(r.letterId) ?? null) : null,
          archiveId: ids.archived.get(r.letterId) ?? null,
          replayId: r.replayId,
        },
      } satisfies AuditEntry;
    });
  }

  /**
   * The move's results, with a stall watchdog (RedriveDeps.stallMs): while no result arrives, the
   * broker is pinged every stallMs; when a ping fails or does not answer in time, the move is
   * abandoned (its generator is told to return, without waiting for it) and the broker's error is
   * thrown, so the batch's unreported letters become "interrupted" and the job pauses. Whatever
   * the move was waiting on (a confirm, a read) belongs to a connection that is gone: RabbitMQ
   * returns its unacked letters to the DLQ.
   */
  private async *watched(moves: AsyncIterable<MoveResult>): AsyncGenerator<MoveResult> {
    const gen = moves[Symbol.asyncIterator]();
    const stop = () => gen.return?.(undefined) ?? Promise.resolve({ done: true as const, value: undefined });
    // One timer per move, not one per letter: it checks how long the move has been silent.
    let last = Date.now();
    let abandon!: (e: BrokerError) => void;
    const abandoned = new Promise<never>((_, reject) => (abandon = reject));
    abandoned.catch(() => undefined);
    let pinging = false;
    const watchdog = setInterval(
      () => {
        if (pinging || Date.now() - last < this.d.stallMs) return;
        pinging = true;
        void this.pingFails().then((away) => {
          pinging = false;
          if (away && Date.now() - last >= this.d.stallMs) abandon(away);
          else last = Date.now(); // the broker answers: wait a whole stallMs before asking again
        });
      },
      Math.max(50, Math.round(this.d.stallMs / 4)),
    );
    let finished = false;
    try {
      for (;;) {
        const next = gen.next();
        next.catch(() => undefined); // an abandoned move's last read may reject later
        let step: IteratorResult<MoveResult>;
        try {
          step = await Promise.race([next, abandoned]);
        } catch (e) {
          // The move threw (it is over), or the watchdog abandoned it: then it is not awaited,
          // since whatever it waits on belongs to a connection that is gone.
          finished = true;
          stop().catch(() => undefined);
          throw e;
        }
        last = Date.now();
        if (step.done) {
          finished = true;
          return;
        }
        yield step.value;
        last = Date.now();
      }
    } finally {
      clearInterval(watchdog);
      if (!finished) await stop();
    }
  }

  /** The broker's error when it does not answer a ping within stallMs, else null. */
  private async pingFails(): Promise<BrokerError | null> {
    try {
      const answered = await raceTimeout(
        this.adapter.ping().then(() => true),
        this.d.stallMs,
      );
      if (answered) return null;
      return new BrokerError("unreachable", {
        userMessage: `The broker did not answer within ${Math.round(this.d.stallMs / 1000)} s while a move was waiting on it.`,
      });
    } catch (e) {
      return isBrokerAway(e)
        ? e
        : new BrokerError("unreachable", {
            cause: e,
            userMessage: "The broker did not answer the console's check while a move was waiting on it.",
          });
    }
  }

  // ---- returns and the breaker --------------------------------------------------------------

  private async checkReturns() {
    await this.drainWrites();
    this.lastReturnCheck = this.d.clock.now();
    const found = await findReturns(this.adapter, this.plan.queue, this.plan.jobId, {
      acceptRisk: this.plan.acceptRisk,
      signal: this.ctx.signal,
    });
    const n = await markReturned(this.db, this.plan.jobId, found.replayIds);
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
      throw new Stop(await this.pause(v.reason!));
    }
  }

  // ---- control, progress, ends --------------------------------------------------------------

  /** Between batches: saves progress, extends the lease, honours cancel and pause requests. */
  private async control() {
    if (this.ctx.signal.aborted)
      throw new AppError("unavailable:stopping", {
        userMessage: "The console stopped; the redrive resumes from its ledger.",
      });
    const r = await this.ctx.checkpoint({ progress: this.progress() });
    if (r.cancelRequested) throw new Stop(await this.finish("cancelled"));
    const p = await this.db.redrivePlan.findUnique({
      where: { jobId: this.plan.jobId },
      select: { pauseRequested: true, pauseReason: true },
    });
    if (p?.pauseRequested) throw new Stop(await this.pause(p.pauseReason ?? "Paused by an operator."));
    if (this.d.clock.now() - this.lastRunnerCheck >= this.d.runnerCheckMs) await this.checkRunners();
  }

  /** The users this job acts for may still run it, and its destinations are still allowed; else it pauses (audited) and stops. */
  private async checkRunners() {
    this.lastRunnerCheck = this.d.clock.now();
    if (this.plan.stage === "awaiting_bulk" || this.plan.stage === "done") return; // nothing moves or reads
    const job = await this.db.job.findUnique({ where: { id: this.plan.jobId }, select: { params: true } });
    const refusal = (await runnerRefusal(this.plan, job?.params ?? null)) ?? (await this.repairRefusal());
    if (!refusal) return;
    await this.drainWrites();
    await auditRefusal(this.plan, refusal, "redrive.auto_pause");
    throw new Stop(await this.pause(refusal.reason));
  }

  /**
   * A repairing redrive also needs, at every check, the config switch for its DLQ and letter:repair
   * for whoever started it (and its second stage): a switch turned off or a demoted admin stops it.
   */
  private async repairRefusal(): Promise<RunnerRefusal | null> {
    if (!this.repair) return null;
    const plan = this.plan;
    const still = "Letters not yet moved are still in the DLQ.";
    try {
      assertRepairAllowed(plan.connectionId, plan.queue, this.adapter);
    } catch (e) {
      const why = e instanceof AppError ? e.userMessage : "Repair is no longer allowed here.";
      return {
        reason: `Paused: ${why} ${still} Resume it once repair is allowed again, or cancel it.`,
        details: { permission: "letter:repair", why: "repair_disabled", stage: plan.stage },
        actor: {
          id: plan.createdById,
          email: plan.createdByEmail,
          role: isRole(plan.createdByRole) ? plan.createdByRole : null,
        },
      };
    }
    const users: Array<{ who: string; id: string | null; email: string | null }> = [
      { who: "the user who started it", id: plan.createdById, email: plan.createdByEmail },
    ];
    if (plan.stage === "bulk" && plan.bulkStartedBy && plan.bulkStartedBy !== plan.createdByEmail) {
      users.push({
        who: "the user who started its second stage",
        id: (await getUserByEmail(plan.bulkStartedBy))?.id ?? null,
        email: plan.bulkStartedBy,
      });
    }
    for (const u of users) {
      const r = await creatorRefusal(u.id, ["letter:repair"]);
      if (r) {
        return {
          reason: `Paused: ${u.who} (${u.email ?? "unknown"}) may no longer repair letters: ${r.text}. ${still} An admin can restore that account or role and then resume it, or cancel it.`,
          details: { permission: r.permission, why: r.why, stage: plan.stage, user: u.email },
          actor: { id: u.id, email: u.email, role: r.role },
        };
      }
    }
    return null;
  }

  /** `autoResume`: the broker went away; resumeReachable (auto-resume.ts) resumes it once the broker answers. */
  private async pause(reason: string, autoResume = false): Promise<JobOutcome> {
    await this.drainWrites();
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
    await this.drainWrites();
    const result = this.result();
    const progress = { ...this.progress(), result };
    await this.operationAudit(
      "redrive.finished",
      { state, summary: result.summary, ...progress },
      resultOutcome(result),
    );
    return { state, progress };
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
      const secs = (this.d.clock.now() - this.bulkStartedAt) / 1000;
      rate = secs > 0.5 ? Math.round(((done - this.bulkMovedAtStart) / secs) * 10) / 10 : 0;
      const left = c.pending + c.interrupted + c.moving;
      eta = left === 0 ? 0 : rate > 0 ? Math.round(left / rate) : Math.round(left / this.plan.rate);
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
