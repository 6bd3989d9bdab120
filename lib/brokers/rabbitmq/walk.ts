/**
 * One walk from the head of a RabbitMQ DLQ, shared by move, remove (mover.ts) and move to safety
 * (safe-move.ts): find each requested letter and check its checksum (or take every letter present
 * at the start), hand it to a "deliver" step, and ack it only when that step says its copy is safe.
 * Which request a letter answers (repeats, twins, checksums) is the shared rule (move-rules.ts,
 * `RequestBook`); a request not answered is "missing" only once the walk has read the whole DLQ as
 * it was when it opened, never when it was aborted or its channel broke.
 *
 * Read-ahead starts at the pipeline's size (2 × maxInFlight letters, at least 16) and the reader's
 * credit is refilled as letters are acked; the consumer is cancelled once the reader holds every
 * letter still asked for (`wanted`), so a walk whose letters are at the head reads barely more than
 * it needs, and the few letters read ahead are handed back when the channel closes; windows
 * double (up to 5,000) only while skipped letters fill them. (A first window of thousands of
 * letters, handed back after every call, made each call of a job cost ~0.2 s.) A channel
 * is not kept open between calls: its unacked letters would be invisible to every other reader of
 * the DLQ (browse, scan, the breaker's look for returns) for as long as the job runs.
 */
import type { Channel, ConfirmChannel, ConsumeMessage } from "amqplib";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REDRIVE_HEADERS, type ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { DlqSummary, ReadRisk } from "@/lib/brokers/contract/dlq";
import { RequestBook, sameChecksum } from "@/lib/brokers/move-rules";
import { closeQuietly, mapAmqpError } from "@/lib/brokers/rabbitmq/connection";
import { QueueReader } from "@/lib/brokers/rabbitmq/reader";
import type { ReadLease } from "@/lib/brokers/rabbitmq/read-lock";
import { OccurrenceCounter, isLetterId, twinOf } from "@/lib/brokers/rabbitmq/identity";
import { letterIdOf } from "@/lib/brokers/rabbitmq/letter";
import { installRawPublish, publishRaw } from "@/lib/brokers/rabbitmq/raw-publish";
import { describeRoute, type Route } from "@/lib/brokers/rabbitmq/route";

export interface MoverContext {
  endpoint: string;
  /** The user the console publishes as: RabbitMQ refuses a user-id property that differs from it. */
  username: string;
  configOrigin: string | null;
  describe(name: string): Promise<DlqSummary>;
  /**
   * The DLQ's read risk, or null; throws not_found for a queue that is not a DLQ the console knows.
   * Cheaper than `describe` (no AMQP round trips while the adapter's snapshot is fresh): the walk's
   * own checkQueue finds a queue deleted since.
   */
  readRisk(name: string): Promise<ReadRisk | null>;
  /** A confirm channel on the adapter's connection (raw-header hook installed). */
  confirmChannel(): Promise<ConfirmChannel>;
  /** A throwaway channel for passive checks (a 404 closes it). */
  channel(): Promise<Channel>;
  /** One console read of a queue at a time (read-lock.ts): held from before the walk's depth until its channel is closed. */
  readLock(queue: string): Promise<ReadLease>;
  idleMs: number;
  bufferBytes: number;
  busyWaitMs: number;
  /** Letters published and not yet confirmed at once (the crash window). Default 64. */
  maxInFlight?: number;
  /** Every broker's and the console's managed header names: a repair that names one is refused. */
  isManagedHeader: ManagedHeaderMatcher;
}

type Settled<Out> = { ack: boolean; out: Out };

/** A letter read and not acked. */
export interface WalkedLetter {
  m: ConsumeMessage;
  ident: ReturnType<typeof letterIdOf>;
}

/** One walk's channel: reads (never acked unless delivered) and publishes. */
export interface Walk {
  ch: ConfirmChannel;
  reader: QueueReader;
  /** Letters in the DLQ when the walk opened: the reader stops after this many. */
  depth: number;
  /** Why RabbitMQ returned a publish, by the walk's return key (x-dlq-replay-id unless the walk set another); one reason per return. */
  returned: Map<string, string[]>;
  channelError: unknown;
  /** Set when the walk itself closes the channel (a close then is not an error). */
  closing?: boolean;
  /** Released once the channel is closed and its letters are back in the DLQ. */
  lease: ReadLease;
}

/** What happens to one selected letter (for requested letters: one whose checksum matched). */
export interface DeliverStep<R, Out> {
  /** Letters whose delivery is pending at once; 1 makes deliveries strictly one after another. */
  maxInFlight: number;
  /** A result now (the letter stays), or a pending delivery whose settlement decides the ack. */
  deliver(
    req: R,
    l: WalkedLetter,
    w: Walk,
    position: number,
  ): Promise<{ done: Out } | { pending: Promise<Settled<Out>> }>;
}

/** The letters a walk hands to its step. */
export type WalkSelection<R, Out> =
  | {
      /**
       * These letters, by letter id (a repeated id is one request, with one result; a request for a
       * twin is answered by any letter with the same content: `RequestBook`, `twinOf`); each one's
       * bytes must still match its checksum.
       */
      requests: R[];
      /** An id no RabbitMQ letter can have: answered without a look (once the DLQ is known to exist). */
      unknownId(req: R): Out;
      mismatch(req: R): Out;
      /** Not found although the walk read the whole DLQ as it was when it opened. */
      missing(req: R): Out;
    }
  | {
      /** Every letter in the DLQ when the walk opens (its depth then, or until the DLQ is empty), in order, each as the request this makes of it. */
      every(l: WalkedLetter): R;
    };

export interface WalkOptions {
  signal?: AbortSignal;
  acceptRisk?: boolean;
  /** The key under which a basic.return is noted in `Walk.returned` (default: its x-dlq-replay-id header). */
  returnKey?: (m: ConsumeMessage) => string | null;
  /** Called once the walk has opened, before any letter is delivered. */
  onOpen?: (w: Walk) => void;
}

function replayIdOf(m: ConsumeMessage): string | null {
  const id = ((m.properties.headers ?? {}) as Record<string, unknown>)[REDRIVE_HEADERS.replayId];
  return typeof id === "string" ? id : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function checkOnSideChannel(ctx: MoverContext, f: (ch: Channel) => Promise<unknown>): Promise<unknown> {
  const ch = await ctx.channel();
  try {
    await f(ch);
    return null;
  } catch (e) {
    return e;
  } finally {
    await closeQuietly(ch);
  }
}

export function is404(e: unknown): boolean {
  const err = e as { code?: number; message?: string };
  return err?.code === 404 || /NOT.FOUND/.test(err?.message ?? "");
}

/** Risk guard, then one confirm channel with an exclusive consumer (retried while another reader holds the queue). */
async function openWalk(
  ctx: MoverContext,
  dlq: string,
  opts: WalkOptions,
  startWindow: number,
  wanted: (() => number) | undefined,
): Promise<Walk> {
  const risk = await ctx.readRisk(dlq);
  if (risk && !opts.acceptRisk)
    throw new BrokerError("risky_read", { userMessage: risk.message, details: { readRisk: risk } });
  const lease = await ctx.readLock(dlq);
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const ch = await ctx.confirmChannel().catch(async (e: unknown) => {
      await lease.release();
      throw e;
    });
    try {
      if (!installRawPublish(ch))
        throw new BrokerError("protocol", {
          userMessage:
            "The console's RabbitMQ client library changed shape: letters cannot be republished byte-exact, so nothing is moved.",
        });
      const depth = (await ch.checkQueue(dlq)).messageCount;
      const reader = new QueueReader(ch, dlq, {
        max: depth,
        idleMs: ctx.idleMs,
        bufferBytes: ctx.bufferBytes,
        minWindow: 4,
        maxWindow: 5000,
        startWindow,
        wanted,
        exclusive: true,
      });
      await reader.start();
      const w: Walk = { ch, reader, depth, returned: new Map(), channelError: null, lease };
      const returnKey = opts.returnKey ?? replayIdOf;
      ch.on("return", (m: ConsumeMessage) => {
        const key = returnKey(m);
        const f = m.fields as unknown as {
          replyCode?: number;
          replyText?: string;
          exchange: string;
          routingKey: string;
        };
        if (key === null) return;
        const reason = `RabbitMQ returned it as unroutable (${f.replyCode ?? "?"} ${f.replyText ?? ""}): ${describeRoute(f.exchange, f.routingKey)} has no queue bound for it. It stays in the DLQ.`;
        const noted = w.returned.get(key);
        if (noted) noted.push(reason);
        else w.returned.set(key, [reason]);
      });
      ch.on("error", (e: unknown) => {
        w.channelError ??= e;
      });
      // A channel that closes under the walk (connection lost, broker stopping) ends the reader as
      // if the queue were exhausted: without this, the letters not reached yet would be reported
      // "missing" instead of the move failing as "unreachable" (and being retried).
      ch.on("close", () => {
        if (!w.closing) w.channelError ??= new Error("Channel closed while the DLQ was being read");
      });
      return w;
    } catch (e) {
      await closeQuietly(ch);
      const mapped = mapAmqpError(e, { endpoint: ctx.endpoint, queue: dlq });
      if (mapped.kind === "throttled" && Date.now() - started < ctx.busyWaitMs) {
        await sleep(Math.min(1000, 50 * 2 ** attempt));
        continue;
      }
      await lease.release();
      throw mapped;
    }
  }
}

export async function* forRequestedLetters<R extends { letterId: string; sha256: string }, Out>(
  ctx: MoverContext,
  dlq: string,
  selection: WalkSelection<R, Out>,
  opts: WalkOptions,
  step: DeliverStep<R, Out>,
): AsyncGenerator<Out> {
  const requested = "requests" in selection ? selection : null;
  const every = "every" in selection ? selection.every : null;
  // 1. Requests: one per letter id; twins answer for each other. An id no letter can have is not
  // looked for (it is answered once the walk has opened, so a DLQ that does not exist still throws).
  const unknown = new Map<string, R>();
  for (const r of requested?.requests ?? [])
    if (!isLetterId(r.letterId) && !unknown.has(r.letterId)) unknown.set(r.letterId, r);
  const book = new RequestBook<R>(
    (requested?.requests ?? []).filter((r) => !unknown.has(r.letterId)),
    twinOf,
  );
  if (requested && requested.requests.length === 0) return;

  // 2. One pass from the head on one confirm channel.
  // Requested letters: no read-ahead past the letters still asked for (QueueReader's `wanted`).
  const wanted = requested ? () => book.size : undefined;
  const w = await openWalk(ctx, dlq, opts, Math.max(16, Math.min(5000, 2 * step.maxInFlight)), wanted);
  opts.onOpen?.(w);
  // `done` turns true when the letter's outcome is known, so the loop checks the head without an await per letter.
  type InFlight = { l: WalkedLetter; p: Promise<Settled<Out>>; done: boolean };
  const inflight: InFlight[] = [];
  // Acks: one basic.ack with multiple=true covers a run of settled letters, but it would also take
  // any earlier letter left unacked on purpose (not requested, checksum mismatch, failed). So runs
  // are only acked together below the first such letter ("hole"); after it, one ack per letter.
  let firstHole = Number.POSITIVE_INFINITY;
  let acked = 0;
  const hole = (m: ConsumeMessage) => (firstHole = Math.min(firstHole, m.fields.deliveryTag));
  /** Settles the head (waiting for it) and every settled letter after it; acks them, then returns their results in order. */
  const settleHeads = async (): Promise<Out[]> => {
    const group = [inflight.shift()!];
    while (inflight.length > 0 && inflight[0].done) group.push(inflight.shift()!);
    const results = await Promise.all(group.map((f) => f.p));
    let run: ConsumeMessage | null = null;
    for (let i = 0; i < group.length; i++) {
      const m = group[i].l.m;
      if (!results[i].ack) {
        hole(m);
        continue;
      }
      // The step confirmed the copy is safe elsewhere: now, and only now, the DLQ copy goes.
      if (m.fields.deliveryTag < firstHole) run = m;
      else w.ch.ack(m);
      w.reader.acked(m);
      acked++;
    }
    if (run) w.ch.ack(run, true);
    return results.map((r) => r.out);
  };
  try {
    if (requested) for (const r of unknown.values()) yield requested.unknownId(r);
    const occ = new OccurrenceCounter();
    // True once the reader came to the end of the DLQ as it was when the walk opened (not aborted).
    let lookedThrough = false;
    for (let pos = 0; every || book.size > 0; pos++) {
      if (opts.signal?.aborted || w.channelError) break;
      // Results settle while we read on.
      while (inflight.length > 0 && (inflight.length >= step.maxInFlight || inflight[0].done))
        yield* await settleHeads();
      const m = await w.reader.next(opts.signal);
      if (!m) {
        lookedThrough = !opts.signal?.aborted;
        break;
      }
      const ident = letterIdOf(m, occ);
      let req: R;
      if (every) req = every({ m, ident });
      else {
        const r = book.take({ letterId: ident.id, sha256: ident.sha256 });
        if (!r) {
          hole(m); // Not requested: stays unacked, returns in order when the channel closes.
          continue;
        }
        if (!sameChecksum(r.sha256, ident.sha256)) {
          hole(m);
          yield requested!.mismatch(r);
          continue;
        }
        req = r;
      }
      const d = await step.deliver(req, { m, ident }, w, pos);
      if ("done" in d) {
        hole(m);
        yield d.done;
      } else {
        const f: InFlight = { l: { m, ident }, p: d.pending, done: false };
        void d.pending.then(
          () => (f.done = true),
          () => (f.done = true),
        );
        inflight.push(f);
      }
    }
    while (inflight.length > 0) yield* await settleHeads();
    if (w.channelError) throw mapAmqpError(w.channelError, { endpoint: ctx.endpoint, queue: dlq });
    // AMQP never answers an ack, and a connection that breaks can take acks already sent with it
    // (a broker that stops reading its socket has not processed them yet): those letters, reported
    // removed, would be back in the DLQ. The broker handles a channel's frames in order, so an
    // answer to any request on this channel proves every ack before it was handled. Without that
    // answer the call fails, and the caller treats its removals as unconfirmed (the redrive's
    // leftover check).
    if (acked > 0) await w.ch.checkQueue(dlq);
    // "Missing" only once every letter the DLQ held when the walk opened was looked at (by id, and
    // by content for twins): never after an abort; a broken channel has thrown above.
    if (requested && lookedThrough && !opts.signal?.aborted)
      for (const req of book.pending()) yield requested.missing(req);
  } catch (e) {
    throw mapAmqpError(e, { endpoint: ctx.endpoint, queue: dlq });
  } finally {
    // Closing returns every letter not acked to the DLQ, in order; pending acks go out first.
    w.closing = true;
    await closeQuietly(w.ch);
    await w.lease.release();
  }
}

/**
 * Publishes with mandatory + persistent on the walk's confirm channel; settles on the confirm (a
 * nack or return fails). `returnKey`: the key the walk notes this letter's basic.return under.
 * `sharedKey`: other letters may have the same key, and a return cannot be told apart from theirs
 * (confirms may come in any order), so a noted return is kept and fails every letter with that key
 * confirmed after it: such a letter stays in the DLQ (a possible duplicate, never a loss).
 */
export function publishConfirmed(
  w: Walk,
  route: Route,
  content: Buffer,
  props: Buffer,
  returnKey: string,
  sharedKey = false,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    publishRaw(w.ch, route.exchange, route.routingKey, content, props, (err) => {
      const noted = w.returned.get(returnKey);
      const ret = sharedKey ? noted?.[0] : noted?.shift();
      if (noted && noted.length === 0) w.returned.delete(returnKey);
      if (err)
        resolve({
          ok: false,
          reason: `RabbitMQ did not confirm the copy (${(err as Error).message ?? err}). It stays in the DLQ.`,
        });
      else if (ret) resolve({ ok: false, reason: ret });
      else resolve({ ok: true });
    });
  });
}
