/**
 * Move to safety on RabbitMQ (`BrokerAdapter.safeMove`: `plan`, `move`): a DLQ whose reads
 * count against its letters (a quorum queue with a delivery limit) is emptied, once, into a durable
 * classic queue, where reading counts nothing.
 *
 * The move is the mover's walk (walk.ts) over every letter present at the start: each letter is
 * read once, published to the target through the default exchange on the walk's confirm channel
 * (mandatory + persistent) with its basic.properties byte for byte as delivered (only delivery-mode
 * is set to 2, so a transient letter that a quorum queue kept on disk stays on disk), and acked in
 * the DLQ only once RabbitMQ confirmed the copy. No redrive marker is added: the copy is the same
 * letter, with the same id. A letter whose copy failed stays unacked and goes back to the DLQ when
 * the walk closes, which RabbitMQ counts as a delivery; so do the few letters read ahead of the
 * pipeline when the move is stopped (at most the walk's read-ahead, 2 × maxInFlight to start with).
 */
import type { ConsumeMessage } from "amqplib";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { ReadRisk } from "@/lib/brokers/contract/dlq";
import type { SafeMoveEvent, SafeMovePlan } from "@/lib/brokers/contract/safe-move";
import { sha256Hex } from "@/lib/brokers/display";
import { closeQuietly, mapAmqpError } from "@/lib/brokers/rabbitmq/connection";
import { rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import { SAFE_COPY_ARG } from "@/lib/brokers/rabbitmq/discovery";
import { parseProperties, userIdRefusal, withPersistentDelivery } from "@/lib/brokers/rabbitmq/amqp-properties";
import { describeRoute, type Route } from "@/lib/brokers/rabbitmq/route";
import { forRequestedLetters, is404, publishConfirmed, type MoverContext } from "@/lib/brokers/rabbitmq/walk";

export const DEFAULT_SAFE_QUEUE_SUFFIX = ".safe";

/** What the adapter adds to the mover's context for a move to safety. */
export interface SafeMoveContext extends MoverContext {
  vhost: string;
  /** The management API is configured: the console reads queue types and policies through it. */
  management: boolean;
  /** Discovery through the management API is on (bindings and exchanges are read too). */
  discovery: boolean;
  /**
   * What makes an existing target unsafe beyond its declared arguments (a policy with a TTL or a
   * length limit), in operator words, or null; from the management API where there is one.
   */
  targetProblem(target: string): Promise<string | null>;
  /** The target is declared as the safe copy of `dlq`. */
  declared(target: string, dlq: string): void;
}

const PROGRESS_EVERY = 100;

const regexLiteral = (s: string) => `^${s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;

/** The broker permissions a move to safety needs, in RabbitMQ's words. */
export function safeMovePermissions(
  ctx: Pick<SafeMoveContext, "vhost" | "management" | "discovery">,
  dlq: string,
  target: string,
): string[] {
  const out = [
    `configure on queue "${target}" in vhost "${ctx.vhost}" (e.g. ${regexLiteral(target)}): queue.declare creates the target, or checks an existing one`,
    `write on exchange "amq.default" in vhost "${ctx.vhost}": each letter is published to "${target}" through the default exchange`,
    `read on queue "${dlq}" in vhost "${ctx.vhost}" (e.g. ${regexLiteral(dlq)}): basic.consume reads the letters, acked once their copies are confirmed`,
  ];
  if (ctx.management) {
    const what = ctx.discovery ? "GET /api/queues, /api/bindings and /api/exchanges" : "GET /api/queues";
    out.push(
      `management API: the "management" user tag with access to vhost "${ctx.vhost}" (${what}: the DLQ's type and delivery limit, the target's arguments and policy${ctx.discovery ? ", discovery" : ""})`,
    );
  }
  return out;
}

/** Depth of an existing queue, or null when there is none (the passive check runs on a channel of its own: a 404 closes it). */
async function depthOf(ctx: MoverContext, name: string): Promise<number | null> {
  const ch = await ctx.channel();
  try {
    return (await ch.checkQueue(name)).messageCount;
  } catch (e) {
    if (is404(e)) return null;
    throw mapAmqpError(e, { endpoint: ctx.endpoint, queue: name });
  } finally {
    await closeQuietly(ch);
  }
}

function dlqNotFound(ctx: MoverContext, dlq: string): BrokerError {
  return new BrokerError("not_found", {
    userMessage: `The DLQ "${dlq}" does not exist on RabbitMQ at ${ctx.endpoint}. Nothing was moved.`,
  });
}

function checkTargetName(dlq: string, target: string): void {
  if (target === dlq)
    throw new BrokerError("bad_request", {
      userMessage: `The safe queue "${target}" is the DLQ itself: choose another name. Nothing was moved.`,
    });
  const bytes = Buffer.byteLength(target, "utf8");
  if (bytes === 0 || bytes > 255)
    throw new BrokerError("bad_request", {
      userMessage: `The safe queue name must be 1 to 255 bytes long ("${target.slice(0, 80)}" is ${bytes}). Nothing was moved.`,
    });
  if (target.startsWith("amq."))
    throw new BrokerError("bad_request", {
      userMessage: `RabbitMQ reserves queue names starting with "amq." ("${target}"): choose another name. Nothing was moved.`,
    });
}

export async function planSafeMove(ctx: SafeMoveContext, dlq: string, target: string): Promise<SafeMovePlan> {
  await ctx.readRisk(dlq); // not_found for a queue that is not a DLQ the console knows
  const depth = await depthOf(ctx, dlq);
  if (depth === null) throw dlqNotFound(ctx, dlq);
  const targetExists = (await depthOf(ctx, target)) !== null;
  return {
    target,
    targetExists,
    description:
      `A durable classic queue "${target}" in vhost "${ctx.vhost}", with no dead-letter exchange, TTL or length limit. Reading a classic queue counts no delivery, ` +
      `so the console can read its letters as often as needed. Each letter of "${dlq}" is read once and copied byte for byte (body, message id, properties, ` +
      `headers and its x-death history; only delivery-mode is set to persistent), and leaves "${dlq}" only once RabbitMQ has confirmed the copy.` +
      (targetExists ? ` "${target}" exists already: the letters go behind those it holds.` : ""),
    permissions: safeMovePermissions(ctx, dlq, target),
    depth,
  };
}

/** Why a failed letter's return to the DLQ matters, for its reason. */
function returnCost(dlq: string, risk: ReadRisk | null): string {
  if (!risk) return "";
  const limit = risk.limit !== undefined ? ` of ${risk.limit}` : "";
  return ` It goes back to "${dlq}" when the move's read ends, and RabbitMQ counts that as one delivery against the delivery limit${limit}: a letter already at the limit is then dropped or dead-lettered onward by RabbitMQ.`;
}

function inequivalentArg(e: unknown): string | null {
  const m = /inequivalent arg '([^']+)'/.exec((e as Error)?.message ?? "");
  return m ? m[1] : null;
}

async function declareTarget(ctx: SafeMoveContext, dlq: string, target: string): Promise<void> {
  const ch = await ctx.channel();
  try {
    await ch.assertQueue(target, {
      durable: true,
      exclusive: false,
      autoDelete: false,
      arguments: { "x-queue-type": "classic", [SAFE_COPY_ARG]: dlq },
    });
  } catch (e) {
    const err = e as { code?: number };
    if (err?.code === 406) {
      const arg = inequivalentArg(e);
      throw new BrokerError("bad_request", {
        cause: e,
        message: (e as Error).message,
        userMessage:
          `The queue "${target}" exists already and is not a plain durable classic queue${arg ? ` (its "${arg}" setting differs)` : ""}: reading it could cost letters too, or it could lose them. ` +
          `Nothing was moved; delete or rename it, or choose another safe queue.`,
      });
    }
    throw mapAmqpError(e, { endpoint: ctx.endpoint, queue: target });
  } finally {
    await closeQuietly(ch);
  }
}

/** See `SafeMoveOps.move` and this file's header. */
export async function* moveToSafety(
  ctx: SafeMoveContext,
  dlq: string,
  target: string,
  opts: { signal?: AbortSignal } = {},
): AsyncGenerator<SafeMoveEvent> {
  checkTargetName(dlq, target);
  const risk = await ctx.readRisk(dlq); // not_found for a queue that is not a DLQ the console knows
  if ((await depthOf(ctx, dlq)) === null) throw dlqNotFound(ctx, dlq);
  await declareTarget(ctx, dlq, target);
  const problem = await ctx.targetProblem(target);
  if (problem)
    throw new BrokerError("bad_request", { userMessage: `${problem} Nothing was moved; choose another safe queue.` });
  ctx.declared(target, dlq);

  const route: Route = { exchange: "", routingKey: target, words: describeRoute("", target) };
  const cost = returnCost(dlq, risk);
  let total: number | null = null;
  let moved = 0;
  let failed = 0;
  const progress = (done: boolean): SafeMoveEvent => ({ kind: "progress", moved, failed, total, done });

  const walk = forRequestedLetters<{ letterId: string; sha256: string }, SafeMoveEvent>(
    ctx,
    dlq,
    { every: (l) => ({ letterId: l.ident.id, sha256: l.ident.sha256 }) },
    {
      signal: opts.signal,
      // The walk refuses a risky DLQ without this. Here the read is the one the risk allows: each
      // letter is read once and, once its copy is confirmed, acked, never returned to the DLQ.
      acceptRisk: true,
      // Copies carry no marker to tell a basic.return apart: returns are matched by body. Letters
      // with the same body then all count as returned (kept in the DLQ: a duplicate, never a loss).
      returnKey: (m: ConsumeMessage) => sha256Hex(m.content),
      onOpen: (w) => {
        total = w.depth;
      },
    },
    {
      maxInFlight: Math.max(1, Math.min(5000, ctx.maxInFlight ?? 64)),
      async deliver(_req, l, w) {
        const m = l.m;
        const event = (outcome: "moved" | "failed", reason: string | null): SafeMoveEvent => ({
          kind: "letter",
          letterId: l.ident.id,
          messageId: typeof m.properties.messageId === "string" ? m.properties.messageId : null,
          sha256: l.ident.sha256,
          bodySize: m.content.length,
          outcome,
          reason,
        });
        const fail = (why: string) => ({ done: event("failed", `${why}${cost}`) });
        const raw = rawPropertiesOf(m.properties);
        if (!raw)
          return fail(
            "The console did not capture this letter's raw properties, so it cannot copy them exactly; it was not moved and stays in the DLQ.",
          );
        let props: Buffer;
        try {
          const refused = userIdRefusal(parseProperties(raw), ctx.username);
          if (refused) return fail(`${refused} It was not moved and stays in the DLQ.`);
          props = withPersistentDelivery(raw);
        } catch (e) {
          return fail(
            `The letter's properties could not be copied exactly (${(e as Error).message}); it was not moved and stays in the DLQ.`,
          );
        }
        // A RangeError (properties larger than a frame) is thrown before anything is written or
        // counted for confirms, so it fails this letter only; anything else ends the walk.
        const confirmed = publishConfirmed(w, route, m.content, props, l.ident.sha256, true).catch((e: unknown) => {
          if (e instanceof RangeError)
            return {
              ok: false as const,
              reason: `The letter could not be published: ${e.message}. It stays in the DLQ.`,
            };
          throw e;
        });
        return {
          pending: confirmed.then((c) =>
            c.ok
              ? { ack: true, out: event("moved", null) }
              : { ack: false, out: event("failed", `${c.reason}${cost}`) },
          ),
        };
      },
    },
  );
  for await (const ev of walk) {
    if (ev.kind === "letter") {
      if (ev.outcome === "moved") moved++;
      else failed++;
    }
    yield ev;
    if ((moved + failed) % PROGRESS_EVERY === 0) yield progress(false);
  }
  yield progress(true);
}
