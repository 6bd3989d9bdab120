/**
 * Moves letters out of a RabbitMQ DLQ, conservation first (DESIGN.md, "The life of a dead letter").
 *
 * One pass from the head of the DLQ on ONE confirm channel: letters are read with the windowed
 * consume-without-ack reader (reader.ts), so every letter that is not moved stays unacked and goes
 * back, in order, when the channel closes. For each requested letter: the checksum of its bytes is
 * verified, its target resolved, and it is republished with `mandatory` and `persistent` through
 * publisher confirms; only when the broker has confirmed it (and not returned it) is its delivery
 * acked. A nack or a basic.return leaves it in the DLQ and yields "failed" with the reason.
 *
 * Byte-exact republishing: amqplib re-encodes headers from its own decoding, which loses 64-bit
 * integers, longstrs that are not valid UTF-8, value type tags (a 'b' byte becomes whatever amqplib
 * guesses) and the order of integer-like keys. So the mover does not hand headers to amqplib: it
 * takes the raw basic.properties bytes the read side captured (raw-headers.ts), copies every property
 * and every header entry byte for byte, replaces only the redrive markers, sets delivery-mode 2, and
 * writes the publish frames itself on the channel (amqplib still numbers the publish and tracks
 * its confirm). Without raw bytes a letter is not moved ("failed"): nothing is re-serialised.
 *
 * Repair and resubmit (`MoveRequest.repair`): the same byte-exact copy with the
 * operator's edits (repair.ts says which): a new body where given, named headers replaced in place
 * as longstr or dropped, a new message-id (the replay id: it is a new message), correlation-id only
 * where the operator gave one, and x-dlq-repaired-by-operation beside the redrive markers. After the
 * broker confirmed the copy, the original's complete copy goes to `opts.beforeRemove` (the archive),
 * one letter at a time in DLQ order, and the original is acked only once that resolved; if it
 * throws, the original stays (the copy is then a tagged duplicate, never a loss).
 *
 * Which request a letter answers, and the words for each outcome, are the shared rules
 * (move-rules.ts): a repeated id is one request; twins (letters without a message id and with the
 * same content, `k-X` and `k-X~2`) answer for each other, so a request for `k-X~2` is met by any
 * such letter still in the DLQ; "missing" only after the walk read the whole DLQ (walk.ts). The
 * AMQP property codec is amqp-properties.ts, the raw publish raw-publish.ts, the routes route.ts.
 *
 * Crash window (exactly-once is impossible): a letter is acked only after its copy is confirmed,
 * never the reverse. If the process dies after a confirm and before the ack reaches the broker,
 * the letter is both in the target and back in the DLQ: a duplicate, never a loss, and the copy
 * carries x-dlq-replay-id so consumers and the console can recognise it. At most `maxInFlight`
 * letters are in that window at once.
 */
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveOptions, MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import type { RemoveOptions, RemoveRequest, RemoveResult } from "@/lib/brokers/contract/remove";
import { b64, encodeEnvelope } from "@/lib/brokers/envelope";
import { moveWords, OneAtATime, repairRefusal } from "@/lib/brokers/move-rules";
import { mapAmqpError } from "@/lib/brokers/rabbitmq/connection";
import { isContentIdentified } from "@/lib/brokers/rabbitmq/identity";
import { toLetter } from "@/lib/brokers/rabbitmq/letter";
import { rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import {
  F_MESSAGE_ID,
  parseProperties,
  rebuildProperties,
  redriveProperties,
  shortstrOf,
  UserIdRefused,
  userIdRefusal,
  type MarkerValues,
} from "@/lib/brokers/rabbitmq/amqp-properties";
import { REPAIR_RULES, repairEditsOf } from "@/lib/brokers/rabbitmq/repair";
import { describeRoute, originRoute, routeQueue, type Route } from "@/lib/brokers/rabbitmq/route";
import {
  checkOnSideChannel,
  forRequestedLetters,
  is404,
  publishConfirmed,
  type MoverContext,
  type WalkedLetter,
} from "@/lib/brokers/rabbitmq/walk";

/** What an id of a RabbitMQ letter is, for `moveWords(…).unknownId` (identity.ts). */
const LETTER_ID_KIND = 'a RabbitMQ letter id ("m-" and its message id, or "k-" and its content fingerprint)';

// ---------------------------------------------------------------------------------------------
// Move: deliver = publish to the target and wait for the broker's confirm.

/** `target`: the queue the copy was published to through the default exchange, once it was confirmed. */
const moved = (
  req: MoveRequest,
  outcome: MoveResult["outcome"],
  destination: string | null,
  reason: string | null,
  target: string | null = null,
): MoveResult => ({
  letterId: req.letterId,
  outcome,
  destination,
  target,
  reason,
  orderingKey: null,
});

/** `opts.heldKeys` never applies: RabbitMQ letters have no ordering key (`orderingKey` is always null). */
export async function* moveLetters(
  ctx: MoverContext,
  dlq: string,
  requests: MoveRequest[],
  opts: MoveOptions = {},
): AsyncGenerator<MoveResult> {
  // A repaired letter must be archived before it leaves the DLQ: without the hook it would be gone
  // unrecorded once its copy is confirmed, so the whole call is refused before anything is read.
  if (!opts.beforeRemove && requests.some((r) => r.repair)) {
    throw new BrokerError("bad_request", {
      message: "moveLetters: repair without beforeRemove",
      userMessage:
        "A repair needs the original archived before it leaves the DLQ, and this move had no archive step. Nothing was moved.",
    });
  }
  // Up front: explicit targets exist (nothing has moved yet). The DLQ itself is checked when the walk opens.
  const targetQueues = new Set<string>();
  for (const r of requests) if (r.target.kind === "queue") targetQueues.add(r.target.name);
  for (const name of targetQueues) {
    if (name === dlq)
      throw new BrokerError("bad_request", {
        userMessage: `The target queue "${name}" is the DLQ itself: choose another target. Nothing was moved.`,
      });
    const e = await checkOnSideChannel(ctx, (ch) => ch.checkQueue(name));
    if (e && is404(e))
      throw new BrokerError("not_found", {
        cause: e,
        userMessage: `The target queue "${name}" does not exist on RabbitMQ at ${ctx.endpoint}. Nothing was moved; create the queue or choose another target.`,
      });
    if (e) throw mapAmqpError(e, { endpoint: ctx.endpoint, queue: name });
  }
  const exchangeChecked = new Map<string, string | null>(); // exchange → problem or null
  const archive = new OneAtATime();
  const words = moveWords("move");

  const selection = {
    requests,
    unknownId: (r: MoveRequest) => moved(r, "missing", null, words.unknownId(LETTER_ID_KIND)),
    mismatch: (r: MoveRequest) => moved(r, "checksum_mismatch", null, words.mismatch),
    missing: (r: MoveRequest) => moved(r, "missing", null, words.missing(dlq)),
  };
  yield* forRequestedLetters<MoveRequest, MoveResult>(ctx, dlq, selection, opts, {
    maxInFlight: Math.max(1, Math.min(5000, opts.maxInFlight ?? ctx.maxInFlight ?? 64)),
    async deliver(req, l, w, position) {
      const m = l.m;
      const refusedRepair = req.repair ? repairRefusal(req.repair, REPAIR_RULES, ctx.isManagedHeader) : null;
      if (refusedRepair) return { done: moved(req, "failed", null, refusedRepair) };
      let route: Route;
      if (req.target.kind === "queue")
        route = { exchange: "", routingKey: req.target.name, words: describeRoute("", req.target.name) };
      else {
        const r = originRoute(m, ctx.configOrigin);
        if ("error" in r) return { done: moved(req, "failed", null, r.error) };
        route = r;
      }
      if (route.exchange !== "") {
        if (!exchangeChecked.has(route.exchange)) {
          const e = await checkOnSideChannel(ctx, (c) => c.checkExchange(route.exchange));
          if (e && !is404(e)) throw mapAmqpError(e, { endpoint: ctx.endpoint });
          exchangeChecked.set(
            route.exchange,
            e
              ? `The exchange "${route.exchange}" no longer exists, so the letter cannot go back where it came from. It stays in the DLQ; choose a target queue explicitly.`
              : null,
          );
        }
        const problem = exchangeChecked.get(route.exchange);
        if (problem) return { done: moved(req, "failed", route.words, problem) };
      }
      const raw = rawPropertiesOf(m.properties);
      if (!raw)
        return {
          done: moved(
            req,
            "failed",
            route.words,
            "The console did not capture this letter's raw headers, so it cannot republish them exactly; it was not moved.",
          ),
        };
      let props: Buffer;
      try {
        props = req.repair
          ? repairedProperties(raw, req, ctx.username)
          : redriveProperties(raw, req.markers, ctx.username);
      } catch (e) {
        if (e instanceof UserIdRefused)
          return { done: moved(req, "failed", route.words, `${e.message} It was not moved.`) };
        return {
          done: moved(
            req,
            "failed",
            route.words,
            `The letter's properties could not be copied exactly (${(e as Error).message}); it was not moved.`,
          ),
        };
      }
      const body = req.repair?.body;
      const content = body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : m.content;
      let confirmed: ReturnType<typeof publishConfirmed>;
      try {
        confirmed = publishConfirmed(w, route, content, props, req.markers.replayId);
      } catch (e) {
        if (e instanceof RangeError)
          return {
            done: moved(
              req,
              "failed",
              route.words,
              `The letter could not be republished: ${e.message}. It stays in the DLQ.`,
            ),
          };
        throw e;
      }
      const copyId = req.repair ? req.markers.replayId : null;
      const target = routeQueue(route);
      const beforeRemove = opts.beforeRemove;
      if (!beforeRemove)
        return {
          pending: confirmed.then((c) =>
            c.ok
              ? { ack: true, out: moved(req, "moved", route.words, null, target) }
              : { ack: false, out: moved(req, "failed", route.words, c.reason) },
          ),
        };
      // The original's copy goes to the caller only once the broker confirmed the new message, one
      // letter at a time in DLQ order, while later letters are already being published.
      const settled = archive.run(async (): Promise<{ ack: boolean; out: MoveResult }> => {
        const c = await confirmed;
        if (!c.ok) return { ack: false, out: moved(req, "failed", route.words, c.reason) };
        try {
          await beforeRemove(letterCopyOf(ctx, req.letterId, l, raw, position));
        } catch (e) {
          // The copy is out there (a duplicate of the original, which stays).
          const reason = words.copyNotArchived(e, route.words, copyId);
          return { ack: false, out: moved(req, "failed", route.words, reason, target) };
        }
        const out = moved(req, "moved", route.words, null, target);
        return { ack: true, out: copyId ? { ...out, copyId } : out };
      });
      return { pending: settled };
    },
  });
}

/** A repaired letter's properties: the markers and the repair's edits (repair.ts); UserIdRefused as redriveProperties. */
function repairedProperties(raw: Buffer, req: MoveRequest, username: string): Buffer {
  const parsed = parseProperties(raw);
  const refused = userIdRefusal(parsed, username);
  if (refused) throw new UserIdRefused(refused);
  const existingMessageId = shortstrOf(parsed, F_MESSAGE_ID);
  const markers: MarkerValues = {
    redriveId: req.markers.redriveId,
    replayId: req.markers.replayId,
    redriveCount: req.markers.redriveCount,
    originalMessageId:
      existingMessageId && existingMessageId.length > 0 ? existingMessageId : req.markers.originalMessageId,
  };
  return rebuildProperties(raw, markers, repairEditsOf(req.repair!, req.markers.replayId), parsed);
}

/**
 * The letter's complete copy, as the archive keeps it (the same for a discard and a repair): the
 * bytes of the letter that actually leaves (`l`, which for a twin may carry another occurrence
 * number than the one requested), under the requested id.
 */
function letterCopyOf(ctx: MoverContext, letterId: string, l: WalkedLetter, raw: Buffer, position: number): LetterCopy {
  const letter = toLetter(l.m, l.ident, position, { configOrigin: ctx.configOrigin });
  const envelope = encodeEnvelope<RabbitEnvelope>("rabbitmq", l.m.content, {
    properties: b64(raw),
    exchange: l.m.fields.exchange,
    routingKey: l.m.fields.routingKey,
  });
  return { letterId, letter, envelope };
}

// ---------------------------------------------------------------------------------------------
// Remove (discard): deliver = hand the complete copy to the caller's beforeRemove.

export interface RabbitEnvelope {
  /** basic.properties exactly as delivered, base64. */
  properties: string;
  /** The exchange and routing key it was delivered to the DLQ with (for the record). */
  exchange: string;
  routingKey: string;
}

const removed = (req: RemoveRequest, outcome: RemoveResult["outcome"], reason: string | null): RemoveResult => ({
  letterId: req.letterId,
  outcome,
  reason,
});

export async function* removeLetters(
  ctx: MoverContext,
  dlq: string,
  requests: RemoveRequest[],
  opts: RemoveOptions,
): AsyncGenerator<RemoveResult> {
  const words = moveWords("discard");
  const archive = new OneAtATime();
  if (opts.ownIdentityOnly) {
    for (const r of requests)
      if (isContentIdentified(r.letterId))
        yield { ...removed(r, "failed", words.contentIdentity), contentIdentified: true };
    requests = requests.filter((r) => !isContentIdentified(r.letterId));
    if (requests.length === 0) return;
  }
  const selection = {
    requests,
    unknownId: (r: RemoveRequest) => removed(r, "missing", words.unknownId(LETTER_ID_KIND)),
    mismatch: (r: RemoveRequest) => removed(r, "checksum_mismatch", words.mismatch),
    missing: (r: RemoveRequest) => removed(r, "missing", words.missing(dlq)),
  };
  yield* forRequestedLetters<RemoveRequest, RemoveResult>(ctx, dlq, selection, opts, {
    // One letter at a time: its copy is archived, then it is acked, before the next one is read.
    maxInFlight: 1,
    async deliver(req, l, _w, position) {
      const raw = rawPropertiesOf(l.m.properties);
      if (!raw)
        return {
          done: removed(
            req,
            "failed",
            "The console did not capture this letter's raw headers, so it cannot keep an exact copy; it was not discarded.",
          ),
        };
      return {
        pending: archive
          .run(() => opts.beforeRemove(letterCopyOf(ctx, req.letterId, l, raw, position)))
          .then(
            () => ({ ack: true, out: removed(req, "removed", null) }),
            (e) => ({ ack: false, out: removed(req, "failed", words.notArchived(e)) }),
          ),
      };
    },
  });
}
