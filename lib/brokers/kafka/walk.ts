/**
 * One walk over the requested records of a DLT, shared by redrive, repair and discard (mover.ts):
 * how Kafka finds letters in DLT order. The requests' bookkeeping is the shared `RequestBook` (a
 * repeated id is one request with one result; offsets identify records, so Kafka has no twins).
 * Records are fetched by offset with plain Fetches (no group, nothing committed), partition by
 * partition in offset order; an offset already handled is not handled again; the checksum is
 * compared as normalised hex (`sameChecksum`); the step's delivery is awaited, and only then is the
 * offset marked handled in Postgres (Kafka cannot delete one record).
 *
 * - Lanes: records with the same key (exact bytes) are delivered one at a time, each after the
 *   previous one settled; keyless records of one DLT partition likewise. Different lanes are
 *   pipelined, at most `concurrency` letters and about `windowBytes` at once. A lane whose letter
 *   failed holds back its later letters in the same call (`moveWords.laneBlocked`); keys held by an
 *   earlier call are `HeldKeys` (`moveWords.heldBack`).
 * - "Missing" only after a look (look.ts): an id outside the log as the walk found it at its start,
 *   an offset the read went past without a record, or, when the log changed under the read
 *   (records deleted, the topic deleted), whatever a fresh look at the partitions shows. An offset
 *   inside the log that could not be read at all is "failed" (still in the DLT), never "missing".
 * - Stopping (abort, an unreachable broker, the caller breaking off): letters in flight settle
 *   (their delivery and mark complete); letters not started get no result and stay unhandled.
 */
import { isUtf8 } from "node:buffer";
import { AppError, isAppError } from "@/lib/errors";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { type HeldKeys, RequestBook, sameChecksum, type MoveVerb } from "@/lib/brokers/move-rules";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import { letterIdOf, parseLetterId } from "@/lib/brokers/kafka/discovery";
import {
  markApplies,
  refKey,
  type HandledMark,
  type HandledOutcome,
  type RecordRef,
  type TopicRef,
} from "@/lib/brokers/kafka/handled-store";
import { sha256Of } from "@/lib/brokers/kafka/letter";
import { kafkaWords, lookOf, outsideTheLog, type Look, type Partitions } from "@/lib/brokers/kafka/look";
import type { MoverDeps } from "@/lib/brokers/kafka/mover-deps";
import { errorChain } from "@/lib/brokers/kafka/producer";
import type { RecordData } from "@/lib/brokers/kafka/share-dlq";

export interface Pending<R> {
  req: R;
  partition: number;
  offset: bigint;
}

export const orderingKeyOf = (key: Uint8Array | null): string | null => {
  if (key === null) return null;
  const buf = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return isUtf8(buf) ? buf.toString("utf8") : `base64:${buf.toString("base64")}`;
};

/** The lane a record settles in, one at a time: its key's exact bytes, or its DLT partition when it has no key (such a lane is never blocked). */
export function laneOf(partition: number, key: Uint8Array | null): string {
  return key === null ? `nokey:${partition}` : `key:${Buffer.from(key).toString("base64")}`;
}

/** Consecutive requested offsets of one partition, read by one chain of Fetches. */
export function planRuns<P extends { partition: number; offset: bigint }>(
  pending: P[],
  maxGap: number,
  maxRun: number,
): P[][] {
  const runs: P[][] = [];
  let cur: P[] = [];
  for (const p of pending) {
    const last = cur[cur.length - 1];
    if (
      last &&
      (last.partition !== p.partition ||
        p.offset - last.offset > BigInt(maxGap) + 1n ||
        p.offset - cur[0].offset >= BigInt(maxRun))
    ) {
      runs.push(cur);
      cur = [];
    }
    cur.push(p);
  }
  if (cur.length) runs.push(cur);
  return runs;
}

/** How one requested record settled in the walk; callers turn it into their own result type. */
export interface Settled<R> {
  req: R;
  outcome: "done" | "missing" | "checksum_mismatch" | "failed";
  reason: string | null;
  destination: string | null;
  /** The topic a copy was produced to (`MoveResult.target`), else null. */
  target: string | null;
  orderingKey: string | null;
  /** Where the delivery put a copy that can be linked to (a repaired copy's record), else null. */
  copyId: string | null;
}

/**
 * A delivery's outcome. Null: stopped before anything happened (no result). `stop`: the broker is
 * unreachable, stop the walk. `target`: the topic a copy was produced to, when one was.
 */
export type Delivery =
  | null
  | { ok: true; destination: string | null; target: string | null; copyId?: string | null }
  | { ok: false; reason: string; destination: string | null; target: string | null; stop?: BrokerError };

/** What happens to one requested record whose checksum matched, before its offset is marked handled. */
export interface RecordStep<R> {
  /** What the call does to a letter, for the operator's words. */
  verb: MoveVerb;
  /** Records delivered at once (1: strictly one after another). */
  concurrency: number;
  /** Keys whose records are not delivered (MoveOptions.heldKeys). */
  heldKeys: HeldKeys;
  /** A failure holds back later records of the same lane in this call (keeps a key's order on the target). */
  blocksLane: boolean;
  /** The handled mark recorded after a successful delivery. */
  mark(req: R): { operationId: string; outcome: HandledOutcome };
  /** Delivers the record (its copy is safe elsewhere when this resolves ok). */
  deliver(
    req: R,
    record: InternalRecord,
    at: { partition: number; offset: bigint; position: number; stopped(): boolean; data?: RecordData },
  ): Promise<Delivery>;
  /** Why a delivered record is still shown as waiting when recording its mark failed. */
  markFailed(req: R, destination: string | null, error: unknown): string;
  /** Checks before anything is read (typed errors: nothing has happened yet). */
  prepare?(): Promise<void>;
  /**
   * The data the record stands for, when it is not its own (a share-group dead letter: its
   * original), with the checksums a request may carry for it; a reason when there is none.
   */
  resolve?(
    record: InternalRecord,
  ): Promise<null | { data: RecordData; checksums: string[] } | { reason: string; holdsBack: boolean }>;
}

const isOffsetOutOfRange = (e: unknown) =>
  errorChain(e).some((l) => l.type === "OFFSET_OUT_OF_RANGE" || l.name === "KafkaJSOffsetOutOfRange");

export async function* forRequestedRecords<R extends { letterId: string; sha256: string }, Out>(
  deps: MoverDeps,
  dlq: string,
  requests: R[],
  signal: AbortSignal | undefined,
  step: RecordStep<R>,
  toResult: (s: Settled<R>) => Out,
): AsyncGenerator<Out> {
  // Up-front checks run on the first next(), before anything is read.
  await step.prepare?.();
  const store = deps.store!;
  const words = kafkaWords(step.verb, dlq, deps.endpoint);
  const book = new RequestBook(requests);
  const ready: Out[] = [];
  let wake: (() => void) | null = null;
  const emit = (s: Settled<R>) => {
    book.take(s.req);
    ready.push(toResult(s));
    wake?.();
  };
  const settled = (
    req: R,
    outcome: Settled<R>["outcome"],
    reason: string | null,
    more: Partial<Pick<Settled<R>, "destination" | "target" | "orderingKey" | "copyId">> = {},
  ): Settled<R> => ({
    req,
    outcome,
    reason,
    destination: null,
    target: null,
    orderingKey: null,
    copyId: null,
    ...more,
  });
  const missing = (p: Pending<R>, reason: string) => emit(settled(p.req, "missing", reason));

  const start = lookOf(
    await deps.partitions(dlq).catch((e) => {
      throw deps.mapError(e, dlq);
    }),
  );
  /** The partitions now; a topic deleted meanwhile is a finding, not an error. */
  const lookAgain = async (): Promise<Look> => {
    try {
      return lookOf(await deps.partitions(dlq));
    } catch (e) {
      const mapped = deps.mapError(e, dlq);
      if (mapped.kind === "not_found") return { gone: true };
      throw mapped;
    }
  };
  /** The log changed under a read: records below the new log start were deleted, or the topic was. */
  const logChanged = (e: unknown) => isOffsetOutOfRange(e) || deps.mapError(e, dlq).kind === "not_found";
  // Before any read: if the topic is recreated during the walk, its records carry other bytes than
  // the index says (checksum_mismatch) and are marked under the old id, never shown handled wrongly.
  const topic: TopicRef = deps.topicKey
    ? await deps.topicKey(dlq).catch((e) => {
        throw deps.mapError(e, dlq);
      })
    : dlq;

  const pending: Array<Pending<R>> = [];
  for (const req of book.pending()) {
    const ref = parseLetterId(req.letterId);
    // Only the canonical id names a record, so no two requests name the same offset.
    if (!ref || letterIdOf(ref.partition, ref.offset) !== req.letterId) {
      emit(settled(req, "missing", words.notALetterId(req.letterId)));
      continue;
    }
    const p = { req, partition: ref.partition, offset: ref.offset };
    const outside = outsideTheLog(start, p, words);
    if (outside) missing(p, outside);
    else pending.push(p);
  }
  pending.sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));

  const concurrency = Math.max(1, step.concurrency);
  const windowBytes = deps.windowBytes ?? 16 * 1024 * 1024;
  const lanes = new Map<string, { tail: Promise<void>; blockedBy: string | null }>();
  let inFlight = 0;
  let heldBytes = 0;
  let stopError: BrokerError | null = null;
  let spaceWaiter: (() => void) | null = null;
  const stopped = () => stopError !== null || signal?.aborted === true;
  const release = (bytes: number) => {
    inFlight--;
    heldBytes -= bytes;
    spaceWaiter?.();
    wake?.();
  };
  const waitForSpace = async (bytes: number) => {
    while (!stopped() && inFlight > 0 && (inFlight >= concurrency || heldBytes + bytes > windowBytes)) {
      await new Promise<void>((r) => (spaceWaiter = r));
      spaceWaiter = null;
    }
  };
  const onAbort = () => {
    spaceWaiter?.();
    wake?.();
  };
  signal?.addEventListener("abort", onAbort);

  /** One record, its lane's previous record settled. */
  const handleOne = async (
    p: Pending<R>,
    record: InternalRecord,
    lane: { blockedBy: string | null },
  ): Promise<Settled<R> | null> => {
    const { req } = p;
    const orderingKey = orderingKeyOf(record.key);
    // A letter without a key is never held (move-rules' HeldKeys): nothing orders it, and an earlier
    // call's failure does not hold it either, so holding it in this call would only depend on batching.
    const block = () => {
      if (step.blocksLane && orderingKey !== null) lane.blockedBy = req.letterId;
    };
    const failed = (reason: string, more: { destination?: string | null; target?: string | null } = {}) =>
      settled(req, "failed", reason, { orderingKey, ...more });
    if (step.heldKeys.isHeld(orderingKey)) return failed(words.heldBack(orderingKey));
    if (lane.blockedBy) return failed(words.laneBlocked(lane.blockedBy));
    const resolved = step.resolve ? await step.resolve(record) : null;
    if (resolved && "reason" in resolved) {
      if (resolved.holdsBack) block();
      return failed(resolved.reason);
    }
    const checksums = [sha256Of(record.value ?? new Uint8Array(0)), ...(resolved?.checksums ?? [])];
    if (!checksums.some((c) => sameChecksum(req.sha256, c))) {
      block();
      return settled(req, "checksum_mismatch", words.mismatch, { orderingKey });
    }
    const position = Number(p.offset - (start.partitions.get(p.partition)?.start ?? 0n));
    const d = await step.deliver(req, record, {
      partition: p.partition,
      offset: p.offset,
      position,
      stopped,
      data: resolved?.data,
    });
    if (d === null) return null;
    if (!d.ok) {
      if (d.stop && !stopError) stopError = d.stop;
      block();
      return failed(d.reason, { destination: d.destination, target: d.target });
    }
    // Delivered (acknowledged by all in-sync replicas, or archived): only now is the offset handled.
    const ref: RecordRef = { partition: p.partition, offset: p.offset };
    let lastError: unknown = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await store.markHandled(deps.connectionId, topic, [ref], step.mark(req));
        return settled(req, "done", null, {
          destination: d.destination,
          target: d.target,
          orderingKey,
          copyId: d.copyId ?? null,
        });
      } catch (e) {
        lastError = e;
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    block();
    return failed(step.markFailed(req, d.destination, lastError), { destination: d.destination, target: d.target });
  };

  let feedError: unknown = null;
  let feedDone = false;
  let topicGone = false;

  /** Handled marks of a run: one range query, read just before its records are handled. */
  const marksOf = async (run: Array<Pending<R>>): Promise<Map<string, HandledMark>> => {
    const partition = run[0].partition;
    try {
      return store.handledBetween
        ? await store.handledBetween(deps.connectionId, topic, partition, run[0].offset, run[run.length - 1].offset)
        : await store.handledAmong(
            deps.connectionId,
            topic,
            run.map((p) => ({ partition, offset: p.offset })),
          );
    } catch (e) {
      throw new AppError("unavailable:database", {
        message: (e as Error).message,
        cause: e,
        userMessage:
          "The console's record of handled Kafka offsets could not be read, so nothing more was done (a handled letter must never be handled twice). Check the database, then resume.",
      });
    }
  };

  /** A record read at a requested offset: already handled, or queued on its lane. False: stopped. */
  const admit = async (p: Pending<R>, record: InternalRecord, marks: Map<string, HandledMark>): Promise<boolean> => {
    const mark = marks.get(refKey(p.partition, p.offset));
    if (markApplies(mark, record.timestamp)) {
      emit(settled(p.req, "missing", words.alreadyHandled(mark), { orderingKey: orderingKeyOf(record.key) }));
      return true;
    }
    const bytes = (record.value?.byteLength ?? 0) + (record.key?.byteLength ?? 0);
    await waitForSpace(bytes);
    if (stopped()) return false;
    inFlight++;
    heldBytes += bytes;
    const name = laneOf(p.partition, record.key);
    const lane = lanes.get(name) ?? { tail: Promise.resolve(), blockedBy: null };
    lane.tail = lane.tail.then(async () => {
      try {
        // Stopped while waiting for its lane: untouched, no result.
        if (stopped()) return;
        const r = await handleOne(p, record, lane);
        if (r) emit(r);
      } catch (e) {
        feedError ??= e;
        stopError ??= isAppError(e) ? (e as BrokerError) : deps.mapError(e, dlq);
      } finally {
        release(bytes);
      }
    });
    lanes.set(name, lane);
    return true;
  };

  /**
   * The last look at requested offsets the read did not hand out (in offset order): outside the log
   * now, or read from there on. The first record at or after an offset is either its record (then
   * it is admitted) or a later one: then there is no record at that offset, nor at any requested
   * offset before the later one. Nothing readable from there on: "failed", still in the DLT, and so
   * for every later offset of the partition (not read again).
   */
  const finalLook = async (
    partition: number,
    leftovers: Array<Pending<R>>,
    marks: Map<string, HandledMark>,
  ): Promise<boolean> => {
    let now = await lookAgain();
    let readPast = -1n;
    let unreadable = false;
    for (const p of leftovers) {
      if (stopped()) return false;
      let outside = outsideTheLog(now, p, words);
      if (outside) {
        missing(p, outside);
        continue;
      }
      if (p.offset < readPast) {
        missing(p, words.noRecordAt(partition, p.offset));
        continue;
      }
      // Nothing could be read from an earlier offset on: nor from this one.
      if (unreadable) {
        emit(settled(p.req, "failed", words.notReadable(partition, p.offset)));
        continue;
      }
      const end = (now as Partitions).partitions.get(partition)!.end;
      const iter = deps.readRecords(dlq, partition, p.offset, end)[Symbol.asyncIterator]();
      let found: InternalRecord | null = null;
      try {
        const next = await iter.next();
        found = next.done ? null : next.value;
      } catch (e) {
        if (!logChanged(e)) throw deps.mapError(e, dlq);
        now = await lookAgain();
        outside = outsideTheLog(now, p, words);
        if (outside) missing(p, outside);
        else emit(settled(p.req, "failed", words.notReadable(partition, p.offset)));
        continue;
      } finally {
        await iter.return?.(undefined)?.catch?.(() => undefined);
      }
      if (found === null) {
        unreadable = true;
        emit(settled(p.req, "failed", words.notReadable(partition, p.offset)));
      } else if (BigInt(found.offset) === p.offset) {
        if (!(await admit(p, found, marks))) return false;
      } else {
        readPast = BigInt(found.offset);
        missing(p, words.noRecordAt(partition, p.offset));
      }
    }
    if (now.gone) topicGone = true;
    return true;
  };

  /** One run of requested offsets: read through, each requested record admitted. False: stopped. */
  const readRun = async (run: Array<Pending<R>>): Promise<boolean> => {
    const partition = run[0].partition;
    const last = run[run.length - 1].offset;
    const wanted = new Map(run.map((p) => [p.offset.toString(), p]));
    const marks = await marksOf(run);
    let from = run[0].offset;
    for (let restarts = 0; ; restarts++) {
      const iter = deps.readRecords(dlq, partition, from, last + 1n)[Symbol.asyncIterator]();
      let changed = false;
      try {
        for (;;) {
          if (stopped()) return false;
          let next: IteratorResult<InternalRecord>;
          try {
            next = await iter.next();
          } catch (e) {
            if (restarts < 3 && logChanged(e)) {
              changed = true;
              break;
            }
            throw deps.mapError(e, dlq);
          }
          if (next.done) break;
          const p = wanted.get(next.value.offset);
          if (!p) continue;
          wanted.delete(next.value.offset);
          if (!(await admit(p, next.value, marks))) return false;
        }
      } finally {
        await iter.return?.(undefined)?.catch?.(() => undefined);
      }
      if (!changed) break;
      // The log changed under the read: what a fresh look shows outside it is missing; the rest is read on.
      const now = await lookAgain();
      for (const [k, p] of wanted) {
        const outside = outsideTheLog(now, p, words);
        if (!outside) continue;
        wanted.delete(k);
        missing(p, outside);
      }
      if (now.gone) topicGone = true;
      if (!wanted.size) return true;
      from = [...wanted.values()][0].offset;
    }
    return wanted.size ? finalLook(partition, [...wanted.values()], marks) : true;
  };

  const feed = async () => {
    for (const run of planRuns(pending, deps.maxGap ?? 8, deps.maxRun ?? 500)) {
      if (stopped()) return;
      if (topicGone) for (const p of run) missing(p, words.topicGone());
      else if (!(await readRun(run))) return;
    }
  };

  const feeding = feed()
    .catch((e) => {
      feedError ??= e;
    })
    .finally(() => {
      feedDone = true;
      wake?.();
    });

  // Results are handed out as records settle. Breaking off the iteration stops new records; those
  // in flight still settle (their delivery and mark complete) before the generator returns.
  let broken = true;
  try {
    for (;;) {
      while (ready.length) yield ready.shift()!;
      if (feedDone && inFlight === 0) break;
      await new Promise<void>((r) => {
        wake = r;
        if (ready.length || (feedDone && inFlight === 0)) r();
      });
      wake = null;
    }
    await feeding;
    while (ready.length) yield ready.shift()!;
    broken = false;
  } finally {
    if (broken) {
      stopError ??= new BrokerError("bad_request", { userMessage: `The ${step.verb} was broken off.` });
      onAbort();
      await feeding;
      while (inFlight > 0) await new Promise<void>((r) => (wake = r));
    }
    signal?.removeEventListener("abort", onAbort);
  }
  if (feedError) throw isAppError(feedError) ? feedError : deps.mapError(feedError, dlq);
  if (stopError) throw stopError;
}
