/**
 * Letters leaving a Pulsar DLQ topic: redrive (publish the copy, wait for the producer's
 * confirmation, then acknowledge the letter on the console's subscription), discard (archive
 * first, then acknowledge) and undo (publish the archived letter to the DLQ topic again).
 *
 * The rules every broker applies the same way are move-rules.ts's (one request per letter id,
 * checksums as normalised hex, held keys, the archive hook one at a time, repair refusals, the
 * operator's words); this file decides what leaves the DLQ when and in which order, send.ts checks
 * and sends one letter's copy, and both reach Pulsar only through `MoverLink` (link.ts).
 *
 * One read of the DLQ per call (the look): from the console subscription's mark-delete position to
 * the last entry stored when the call began, skipping what the subscription had acknowledged. It
 * finds the requested letters in log order; letters not requested are neither acknowledged nor
 * reordered, and letters that arrive during the call are not read. Once per window of letters the
 * subscription's acknowledgements are read again, so a letter acknowledged by someone else since
 * the read began is reported missing where it is found instead of being copied. A request the look
 * did not find is missing; a call that was stopped claims nothing about the requests it did not reach.
 */
import { HeldKeys, moveWords, OneAtATime, RequestBook, sameChecksum } from "@/lib/brokers/move-rules";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { MoveOptions, MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import type {
  RemoveOptions,
  RemoveRequest,
  RemoveResult,
  RepublishOptions,
  RepublishRequest,
  RepublishResult,
} from "@/lib/brokers/contract/remove";
import { openEach, republishFailed } from "@/lib/brokers/envelope";
import { shortName, type TopicName } from "@/lib/brokers/pulsar/client";
import { copyOf, type PulsarEnvelope } from "@/lib/brokers/pulsar/copy";
import {
  byEntry,
  entryAck,
  entryHeld,
  isBatch,
  partialBatch,
  type Entry,
  type Found,
} from "@/lib/brokers/pulsar/entries";
import { toLetter, type LetterContext } from "@/lib/brokers/pulsar/letter";
import type { MoverLink, Publisher } from "@/lib/brokers/pulsar/link";
import { decodeMessageId, letterIdOf, positionOfLetterId, type AckState } from "@/lib/brokers/pulsar/message-id";
import { missingTopic } from "@/lib/brokers/pulsar/reader";
import { CopySender, moveResult, reasonOf, type Sent } from "@/lib/brokers/pulsar/send";

export interface MoverDeps {
  subscription: string;
  /** True when the console's subscription exists (created if allowed). */
  ensureSubscription(t: TopicName): Promise<boolean>;
  letterContext(name: string): LetterContext;
  /** Every broker's and the console's managed header names: a repair that names one is refused. */
  isManagedHeader: ManagedHeaderMatcher;
}

/** A letter sent or settled, oldest first: acknowledged once settled as moved. */
interface InFlight extends Sent {
  key: string | null;
  /** What acknowledges the letter once moved; null when there is nothing to acknowledge. */
  ackId: string | null;
}

const failsKey = (r: { outcome: string }) => r.outcome === "failed" || r.outcome === "checksum_mismatch";

/** What a Pulsar letter id is, for `moveWords(…).unknownId`. */
const ID_KIND = "a Pulsar message position (<ledger>-<entry>, or <ledger>-<entry>-<batch index> in a batched entry)";
/** The requests whose id no Pulsar letter can have, taken out of the book: missing without a look. */
const unknownIds = <R extends { letterId: string; sha256: string }>(book: RequestBook<R>): R[] =>
  book.pending().filter((r) => positionOfLetterId(r.letterId) === null && book.take(r) !== null);

export class PulsarMover {
  constructor(
    private readonly link: MoverLink,
    private readonly deps: MoverDeps,
  ) {}

  /** The console can acknowledge on the DLQ; else a BrokerError before anything moves. */
  private async prepare(dlq: TopicName): Promise<void> {
    if (!(await this.deps.ensureSubscription(dlq))) {
      throw new BrokerError("bad_request", {
        userMessage: `Topic ${shortName(dlq)} has no subscription "${this.deps.subscription}", and the connection does not let the console create it (createSubscription is off): letters cannot be taken off the DLQ without it. Create it from the earliest message, then retry.`,
      });
    }
  }

  /**
   * The look: the entries of the DLQ that hold requested letters, in log order, each request taken
   * out of the book where its letter is found. Once per `recheckEvery` letters handed out the
   * subscription's acknowledgements are read again (`Entry.gone`): the read starts half-way through
   * each stretch and is awaited at its end, so its round trip does not hold up a large window.
   */
  private async *walk<R extends { letterId: string; sha256: string }>(
    dlq: TopicName,
    book: RequestBook<R>,
    ctx: LetterContext,
    recheckEvery: number,
    signal?: AbortSignal,
  ): AsyncGenerator<Entry<R>> {
    let acks: AckState | null = null;
    let reading: Promise<AckState> | null = null;
    let since = 0;
    for await (const members of byEntry(this.link.read(dlq, signal))) {
      const picked: Array<Found<R>> = [];
      for (const msg of members) {
        const letterId = letterIdOf(msg.id);
        if (!book.get(letterId)) continue;
        const letter = toLetter(msg.frame, msg.id, 0, ctx);
        const req = book.take({ letterId, sha256: letter.sha256 });
        if (req) picked.push({ req, msg, letter });
      }
      if (picked.length === 0) continue;
      if (reading === null && since * 2 >= recheckEvery) {
        reading = this.link.acked(dlq);
        reading.catch(() => undefined);
      }
      if (reading !== null && since >= recheckEvery) {
        acks = await reading;
        reading = null;
        since = 0;
      }
      since += picked.length;
      yield { members, picked, gone: acks?.isAcked(members[0].id) ?? false };
      if (book.size === 0 || signal?.aborted) return;
    }
  }

  async *move(dlq: TopicName, requests: MoveRequest[], opts: MoveOptions = {}): AsyncGenerator<MoveResult> {
    if (requests.length === 0) return;
    if (requests.some((r) => r.repair) && !opts.beforeRemove) {
      throw new BrokerError("bad_request", {
        userMessage:
          "A repair must archive the original letter before it leaves the DLQ, and this request gave no archive. Nothing was read or published.",
      });
    }
    await this.prepare(dlq);
    const name = shortName(dlq);
    const ctx = this.deps.letterContext(name);
    const words = moveWords("move");
    const book = new RequestBook(requests);
    const held = new HeldKeys(opts.heldKeys);
    const sender = new CopySender(this.link, dlq, ctx, held, opts.beforeRemove, this.deps.isManagedHeader);
    const dispatch = (found: Found<MoveRequest>) => sender.send(found);

    // Copies in flight, oldest first: at most `window`, and at most one per ordering key, so a key's
    // letters are confirmed (or held back) in DLQ order. Each is acknowledged once settled as moved.
    const window = Math.max(1, Math.min(256, opts.maxInFlight ?? 32));
    const pending: InFlight[] = [];
    const keysInFlight = new Map<string, number>();
    const settleOldest = async (): Promise<MoveResult> => {
      const p = pending.shift()!;
      const r = await p.settled;
      if (p.key !== null) keysInFlight.set(p.key, (keysInFlight.get(p.key) ?? 1) - 1);
      if (r.outcome === "moved" && p.ackId !== null) acks.ack(p.ackId);
      else if (failsKey(r)) held.hold(r.orderingKey, r.letterId);
      return r;
    };
    const missing = (letterId: string, reason = words.missing(name)) => moveResult(letterId, null, "missing", reason);
    /** A batched entry's letters, one by one: the entry leaves whole (one acknowledgement) or not at all. */
    const moveEntry = async (entry: Entry<MoveRequest>): Promise<MoveResult[]> => {
      const partial = partialBatch(entry.members, entry.picked.length, "move");
      const results: MoveResult[] = [];
      let stopper: string | null = null;
      for (const found of entry.picked) {
        const reason = partial ?? (stopper === null ? null : entryHeld(stopper, "move"));
        const r: MoveResult = reason
          ? moveResult(found.req.letterId, found.letter.orderingKey, "failed", reason)
          : await (await dispatch(found)).settled;
        if (r.outcome !== "moved") stopper ??= r.letterId;
        results.push(r);
      }
      if (stopper === null) acks.ack(entryAck(entry.members));
      return results.map((r) =>
        stopper === null || r.outcome !== "moved"
          ? r
          : {
              ...r,
              outcome: "failed",
              reason: `Its copy was published to ${r.destination}, but letter ${stopper} of the same Pulsar entry was not moved, and Pulsar removes whole entries only: it stays in the DLQ (the copy at the target is a duplicate).`,
            },
      );
    };

    for (const r of unknownIds(book)) yield missing(r.letterId, words.unknownId(ID_KIND));
    const acks = await this.link.acker(dlq);
    let broken: unknown = null;
    try {
      try {
        for await (const entry of this.walk(dlq, book, ctx, window, opts.signal)) {
          if (entry.gone) {
            for (const { req } of entry.picked)
              pending.push({ settled: Promise.resolve(missing(req.letterId)), key: null, ackId: null });
            continue;
          }
          // A batched entry waits for everything before it; a single letter for the window and its key.
          const key = isBatch(entry.members) ? null : entry.picked[0].letter.orderingKey;
          while (
            pending.length > 0 &&
            (isBatch(entry.members) || pending.length >= window || (key !== null && (keysInFlight.get(key) ?? 0) > 0))
          )
            yield await settleOldest();
          if (opts.signal?.aborted) break;
          if (isBatch(entry.members)) {
            for (const r of await moveEntry(entry)) {
              if (failsKey(r)) held.hold(r.orderingKey, r.letterId);
              yield r;
            }
            continue;
          }
          const found = entry.picked[0];
          pending.push({ settled: (await dispatch(found)).settled, key, ackId: found.msg.frame.messageId });
          if (key !== null) keysInFlight.set(key, (keysInFlight.get(key) ?? 0) + 1);
        }
      } catch (e) {
        // The read broke off: what was sent is still settled below, then the error goes to the caller.
        broken = e;
      }
      // Copies already sent are settled (and acknowledged when moved) even when the move was stopped.
      while (pending.length > 0) yield await settleOldest();
    } finally {
      await acks.close();
      await sender.close();
    }
    if (broken !== null) throw broken;
    if (opts.signal?.aborted) return;
    for (const r of book.pending()) yield missing(r.letterId);
  }

  async *remove(dlq: TopicName, requests: RemoveRequest[], opts: RemoveOptions): AsyncGenerator<RemoveResult> {
    if (requests.length === 0) return;
    await this.prepare(dlq);
    const name = shortName(dlq);
    const ctx = this.deps.letterContext(name);
    const words = moveWords("discard");
    const book = new RequestBook(requests);
    const archive = new OneAtATime();
    const result = (letterId: string, outcome: RemoveResult["outcome"], reason: string | null): RemoveResult => ({
      letterId,
      outcome,
      reason,
    });

    /** Checks one letter and hands its complete copy over; "removed" meaning archived, not yet acknowledged. */
    const take = async ({ req, msg, letter }: Found<RemoveRequest>): Promise<RemoveResult> => {
      if (!sameChecksum(req.sha256, letter.sha256)) return result(req.letterId, "checksum_mismatch", words.mismatch);
      try {
        await archive.run(() => opts.beforeRemove(copyOf(name, req.letterId, letter, msg.frame)));
      } catch (e) {
        return result(req.letterId, "failed", words.notArchived(e));
      }
      return result(req.letterId, "removed", null);
    };

    for (const r of unknownIds(book)) yield result(r.letterId, "missing", words.unknownId(ID_KIND));
    const acks = await this.link.acker(dlq);
    try {
      // Letters leave one at a time (each archived first): the acknowledgements are read again before each.
      for await (const entry of this.walk(dlq, book, ctx, 1, opts.signal)) {
        const partial = partialBatch(entry.members, entry.picked.length, "discard");
        const results: RemoveResult[] = [];
        let stopper: string | null = null;
        for (const found of entry.picked) {
          const letterId = found.req.letterId;
          const r = entry.gone
            ? result(letterId, "missing", words.missing(name))
            : partial
              ? result(letterId, "failed", partial)
              : stopper !== null
                ? result(letterId, "failed", entryHeld(stopper, "discard"))
                : await take(found);
          if (r.outcome !== "removed") stopper ??= letterId;
          results.push(r);
        }
        const whole = stopper === null;
        if (whole) acks.ack(entryAck(entry.members));
        for (const r of results)
          yield whole || r.outcome !== "removed"
            ? r
            : result(
                r.letterId,
                "failed",
                `Archived, but letter ${stopper} of the same Pulsar entry was not, and Pulsar removes whole entries only: it stays in the DLQ (and its copy is in the archive).`,
              );
      }
    } finally {
      await acks.close();
    }
    if (opts.signal?.aborted) return;
    for (const r of book.pending()) yield result(r.letterId, "missing", words.missing(name));
  }

  async *republish(
    dlq: TopicName,
    requests: RepublishRequest[],
    opts: RepublishOptions = {},
  ): AsyncGenerator<RepublishResult> {
    if (requests.length === 0) return;
    if (!(await this.link.topicExists(dlq))) throw missingTopic(dlq);
    let producer: Publisher | null = null;
    try {
      for (const item of openEach<PulsarEnvelope>("pulsar", requests, opts.signal)) {
        if ("failed" in item) {
          yield item.failed;
          continue;
        }
        const { req, env } = item;
        try {
          producer ??= await this.link.producer(dlq);
          const id = await producer.send({
            payload: req.body,
            properties: Object.fromEntries(env.properties),
            key: env.key,
            eventTime: env.eventTime,
          });
          yield {
            id: req.id,
            outcome: "published",
            how: "published",
            letterId: letterIdOf(decodeMessageId(id)),
            reason: null,
          };
        } catch (e) {
          yield republishFailed(req, `${reasonOf(e).replace(/\.$/, "")}. Nothing was published.`);
        }
      }
    } finally {
      await producer?.close();
    }
  }
}
