import "server-only";
import { randomUUID } from "node:crypto";
import type { AuditOutcome } from "@/lib/audit";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveRequest, MoveResult, RedriveTarget } from "@/lib/brokers/contract/move";
import type { PrismaClient, RedrivePlan } from "@/lib/generated/prisma/client";
import type { JobContext } from "@/lib/jobs/types";
import type { Clock } from "./clock";
import type { GroupRepair } from "./group-repair";
import {
  clearLeftoverCheck,
  leftoverRows,
  markLeftoverCheck,
  recordOutcomes,
  releaseClaims,
  settledOf,
  type countStates,
  type LedgerRow,
  type LetterAuditContext,
  type Settled,
} from "./ledger";
import type { Parking } from "./plan";
import { markersOf } from "./returns";
import { moveWindowFor, type TokenBucket } from "./token-bucket";

/** The broker cannot be reached or is busy: nothing about a letter, resumable. */
export function isBrokerAway(e: unknown): e is BrokerError {
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

export interface MoverDeps {
  clock: Clock;
  /** See RedriveDeps.stallMs (handler.ts). */
  stallMs: number;
}

/** One audit row about the whole operation, in the name of the redrive's starter (the stage machine writes it). */
export type OperationAudit = (
  action: string,
  details: Record<string, unknown>,
  outcome?: AuditOutcome,
) => Promise<unknown>;

/**
 * A redrive's batch mover: claims letters from the ledger at the plan's rate, moves them through
 * the adapter under a stall watchdog, settles every claimed row (what the broker reported, what
 * its going away means for each letter), and writes the batch's outcomes and audit rows, overlapped
 * with the next batch in the bulk stage. Keeps the ledger's counts as the run sees them, the
 * ordering keys held back, and where the sample's copies went. Letters whose removal a broken
 * connection may have lost are removed at the next run (removeLeftovers).
 */
export class BatchMover {
  /** The ledger's counts by state, kept up to date with every batch (the stage machine reads them). */
  counts!: Awaited<ReturnType<typeof countStates>>;
  /** When a letter was last found not in the DLQ after an interrupted attempt (0: not in this run). */
  lastUnconfirmedAt = 0;
  /**
   * Where the next claim starts (claimNext's `afterSeq`): every ledger row up to this seq was claimed
   * by this run or held by another claimer, so the claim does not walk the job's finished rows
   * again (without it a claim at letter 150,000 of a 200,000-letter job walked 150,000 of them:
   * 150-195 ms each). A row put back ("pending", "interrupted") moves it back before that row, and
   * a stage ends only after one claim from the start finds nothing. -1: from the start (startStage).
   */
  private claimAfter = -1;
  /** Ordering keys of letters that failed earlier in this job: their later letters are held back (MoveOptions.heldKeys). */
  heldKeys = new Set<string>();
  /** The previous bulk batch's ledger and audit writes, running while the next batch moves. */
  private writing: Promise<void> | null = null;
  /**
   * The next bulk batch's claim, made while this batch moves (claimAhead), until takeAhead or
   * releaseAhead; `stop` ends its wait for the token bucket (a slow job's pause is not held up by it).
   */
  private ahead: { rows: Promise<LedgerRow[]>; stop: AbortController } | null = null;
  /** Where this run's sample moves put each copy (`MoveResult.target`), by letter id: the targets the watch marks. */
  readonly sampleCopies = new Map<string, string>();
  /** The job's lease holder this run is (`lease_owner`): outcomes are written only while it holds the lease. */
  readonly owner: string;

  constructor(
    private readonly db: PrismaClient,
    private readonly ctx: JobContext,
    private readonly d: MoverDeps,
    private readonly plan: RedrivePlan,
    private readonly adapter: BrokerAdapter,
    private readonly audit: LetterAuditContext,
    private readonly repair: GroupRepair | null,
    private readonly operationAudit: OperationAudit,
  ) {
    this.owner = ctx.job.leaseOwner ?? "";
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
  async removeLeftovers() {
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

  /** A stage's claims start from the ledger's start (claimInOrder's cursor, back to -1). */
  startStage(): void {
    this.claimAfter = -1;
  }

  /**
   * Claims up to `size` letters once the bucket lets them go. Paced before the claim, so that
   * claimed rows are not left "moving" while the bucket waits, and for the letters the counts say
   * are left (`expected`), so that the claim that finds nothing costs no wait at the end. Should
   * the claim find more than the counts said, the extra letters are paid for before they move.
   */
  async pacedClaim(
    bucket: TokenBucket,
    size: number,
    expected: number,
    claim: (limit: number) => Promise<LedgerRow[]>,
    waitSignal: AbortSignal = this.ctx.signal,
  ): Promise<LedgerRow[]> {
    const n = Math.max(0, Math.min(size, expected));
    // `waitSignal` ends the wait before the claim only: once rows are claimed, they are paid for.
    if (n > 0) await bucket.take(n, waitSignal);
    const rows = await claim(n > 0 ? n : size);
    if (rows.length > n) await bucket.take(rows.length - n, this.ctx.signal);
    return rows;
  }

  /**
   * pacedClaim in ledger order, from this stage's cursor (`claimAfter`, moved on past every row
   * claimed): nothing after it, and the claim looks once more from the start, so a row put back or
   * skipped while locked is found before the stage ends. Call startStage() before a stage's first.
   */
  claimInOrder(
    bucket: TokenBucket,
    size: number,
    expected: number,
    claim: (limit: number, afterSeq: number) => Promise<LedgerRow[]>,
    waitSignal?: AbortSignal,
  ): Promise<LedgerRow[]> {
    return this.pacedClaim(
      bucket,
      size,
      expected,
      async (limit) => {
        let rows = await claim(limit, this.claimAfter);
        if (rows.length === 0 && this.claimAfter >= 0) {
          this.claimAfter = -1;
          rows = await claim(limit, -1);
        }
        for (const r of rows) if (r.seq > this.claimAfter) this.claimAfter = r.seq;
        return rows;
      },
      waitSignal,
    );
  }

  /**
   * Starts claiming the next batch (claimInOrder, paced as ever) while the current one moves, so
   * that the claim's round trip does not stand between two moves: unthrottled, the claims were 16%
   * of a job's time (0.47–0.52 s of 2.96–3.37 s for 20,000 letters), all of it serial. Call it right
   * after moveBatch started (its counts are then the current batch's). The rows come back from
   * takeAhead; a run that stops before it (pause, cancel, an error) gives them back with
   * releaseAhead: nothing was sent, so each row is as it was before the claim.
   */
  claimAhead(
    bucket: TokenBucket,
    size: number,
    expected: number,
    claim: (limit: number, afterSeq: number) => Promise<LedgerRow[]>,
  ): void {
    const stop = new AbortController();
    const rows = this.claimInOrder(bucket, size, expected, claim, AbortSignal.any([this.ctx.signal, stop.signal]));
    rows.catch(() => undefined); // observed here; the error surfaces at takeAhead or releaseAhead
    this.ahead = { rows, stop };
  }

  /**
   * The rows claimAhead claimed, or null when there was no claim ahead or it found none: the caller
   * then claims again, now that the batch before has settled (a row that batch put back to
   * "pending" after the claim ahead had looked past it is found then, not left behind).
   */
  async takeAhead(): Promise<LedgerRow[] | null> {
    const ahead = this.ahead;
    this.ahead = null;
    if (!ahead) return null;
    const rows = await ahead.rows;
    return rows.length > 0 ? rows : null;
  }

  /**
   * Gives back the rows claimed ahead and not moved (releaseClaims): called before a run pauses or
   * ends. A claim still waiting for the bucket stops waiting and claims nothing; one that failed
   * claimed nothing either (its transaction rolled back).
   */
  async releaseAhead(): Promise<void> {
    const ahead = this.ahead;
    this.ahead = null;
    if (!ahead) return;
    ahead.stop.abort();
    const rows = await ahead.rows.catch(() => [] as LedgerRow[]);
    await releaseClaims(this.db, this.plan.jobId, rows, this.owner);
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
  async moveBatch(
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
    const patches = this.repair && move.length > 0 ? await this.repair.patchesFor(move) : null;
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
        const beforeRemove = patches ? (copy: LetterCopy) => this.repair!.archiveOriginal(copy, archived) : undefined;
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
    for (const s of settled)
      if (s.state === "pending" || s.state === "interrupted")
        this.claimAfter = Math.min(this.claimAfter, (byId.get(s.letterId)?.seq ?? 0) - 1);
    if (settled.some((x) => x.state === "unconfirmed")) this.lastUnconfirmedAt = this.d.clock.now();
    for (const s of settled) {
      this.counts[s.state]++;
      if (s.state === "failed" && s.retryLater) this.counts.retryLater++;
      if ((s.state === "failed" || s.state === "checksum_mismatch") && s.orderingKey !== null)
        this.heldKeys.add(s.orderingKey);
    }
    await this.drainWrites();
    const repairedRows = patches ? await this.repair!.repairedAudit(move, patches, settled, { archived, copyIds }) : [];
    // One transaction under the job's lease: the outcomes, the letters' audit rows (the repair rows
    // first) and their audited marks (ledger.ts, recordOutcomes and holdsLease).
    const write = recordOutcomes(this.db, this.plan.jobId, settled, {
      ctx: this.audit,
      before: repairedRows,
      owner: this.owner,
      rowIds: new Map(rows.map((r) => [r.letterId, r.id])),
    });
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

  async drainWrites(): Promise<void> {
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
    /** The broker's error once the watchdog gave up on the move, and how it fails the step awaited then. */
    const watch: { away: BrokerError | null; fail: ((e: BrokerError) => void) | null } = { away: null, fail: null };
    let pinging = false;
    const watchdog = setInterval(
      () => {
        if (pinging || Date.now() - last < this.d.stallMs) return;
        pinging = true;
        void this.pingFails().then((away) => {
          pinging = false;
          if (away && Date.now() - last >= this.d.stallMs) {
            watch.away = away;
            watch.fail?.(away);
          } else last = Date.now(); // the broker answers: wait a whole stallMs before asking again
        });
      },
      Math.max(50, Math.round(this.d.stallMs / 4)),
    );
    let finished = false;
    try {
      for (;;) {
        let step: IteratorResult<MoveResult>;
        try {
          if (watch.away) throw watch.away;
          const next = gen.next();
          // Settled by the move's next result or by the watchdog, whichever comes first. One promise
          // per letter that ends with it: a Promise.race against one promise that settles only when
          // the watchdog gives up added a reaction to it per letter, kept (with its step) until the
          // move ended, so a batch's steps outlived the young generation. The move's rejection is
          // handled here, also when it comes after the watchdog gave up.
          step = await new Promise<IteratorResult<MoveResult>>((resolve, reject) => {
            watch.fail = reject;
            next.then(resolve, reject);
          });
          watch.fail = null;
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
}
