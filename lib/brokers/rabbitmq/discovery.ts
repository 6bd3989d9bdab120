/**
 * Finding DLQs from management API data: a queue is a DLQ when another queue names it as its
 * dead-letter target, through x-dead-letter-exchange / x-dead-letter-routing-key in its
 * arguments or its effective policy. The exchange is resolved through the bindings. Pure functions.
 */
import type { MgmtBinding, MgmtExchange, MgmtQueue } from "@/lib/brokers/rabbitmq/management";
import { READ_LOCK_PREFIX } from "@/lib/brokers/rabbitmq/read-lock";

function policyOf(q: MgmtQueue): Record<string, unknown> {
  const p = q.effective_policy_definition;
  return p && !Array.isArray(p) && typeof p === "object" ? p : {};
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** Queue arguments win over policy keys, as in RabbitMQ for dead-lettering settings. */
export function deadLetterTarget(q: MgmtQueue): { exchange: string; routingKey?: string } | null {
  const args = q.arguments ?? {};
  const pol = policyOf(q);
  const exchange = str(args["x-dead-letter-exchange"]) ?? str(pol["dead-letter-exchange"]);
  if (exchange === undefined) return null;
  const routingKey = str(args["x-dead-letter-routing-key"]) ?? str(pol["dead-letter-routing-key"]);
  return { exchange, routingKey };
}

/** AMQP topic matching: `*` is one word, `#` zero or more. */
export function topicMatches(pattern: string, key: string): boolean {
  const p = pattern.split(".");
  const k = key === "" ? [] : key.split(".");
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    const m = `${i},${j}`;
    if (memo.has(m)) return memo.get(m)!;
    let r: boolean;
    if (i === p.length) r = j === k.length;
    else if (p[i] === "#") r = go(i + 1, j) || (j < k.length && go(i, j + 1));
    else r = j < k.length && (p[i] === "*" || p[i] === k[j]) && go(i + 1, j + 1);
    memo.set(m, r);
    return r;
  };
  return go(0, 0);
}

/**
 * Queues a dead letter from `q` can land in. Without a dead-letter routing key the letter keeps its
 * own routing keys, which are unknown here: every queue bound to the exchange counts. Exchange-to-
 * exchange bindings are followed (cycles cut).
 */
export function targetsOf(q: MgmtQueue, bindings: MgmtBinding[], exchangeTypes: Map<string, string>): string[] {
  const t = deadLetterTarget(q);
  if (!t) return [];
  if (t.exchange === "") return t.routingKey ? [t.routingKey] : [];
  const out = new Set<string>();
  const visit = (exchange: string, seen: Set<string>) => {
    if (seen.has(exchange)) return;
    seen.add(exchange);
    const type = exchangeTypes.get(exchange) ?? "direct";
    for (const b of bindings) {
      if (b.source !== exchange) continue;
      const matches =
        t.routingKey === undefined || type === "fanout" || type === "headers" || !["direct", "topic"].includes(type)
          ? true
          : type === "topic"
            ? topicMatches(b.routing_key, t.routingKey)
            : b.routing_key === t.routingKey;
      if (!matches) continue;
      if (b.destination_type === "queue") out.add(b.destination);
      else visit(b.destination, seen);
    }
  };
  visit(t.exchange, new Set());
  return [...out];
}

/** DLQ name → the queues that dead-letter into it. Only existing queues are returned. */
export function discoverDlqs(
  queues: MgmtQueue[],
  bindings: MgmtBinding[],
  exchanges: MgmtExchange[],
): Map<string, string[]> {
  const types = new Map(exchanges.map((e) => [e.name, e.type]));
  const existing = new Set(queues.map((q) => q.name));
  const found = new Map<string, string[]>();
  for (const q of queues) {
    // A console's read lock (read-lock.ts) holds no letter: a policy that gives every queue a
    // dead-letter exchange would otherwise list it, for the length of a read, as an origin.
    if (q.name.startsWith(READ_LOCK_PREFIX)) continue;
    for (const target of targetsOf(q, bindings, types)) {
      if (!existing.has(target) || target === q.name) continue;
      const list = found.get(target) ?? [];
      list.push(q.name);
      found.set(target, list);
    }
  }
  return found;
}

export interface QueueKind {
  queueType: string; // classic | quorum | stream | unknown
  deliveryLimit: number | null;
  /** The limit is RabbitMQ 4's default for quorum queues that set none, not one the queue sets. */
  defaultLimit?: boolean;
  /** The DLQ's own dead-letter exchange, where letters over the delivery limit go instead of being dropped. */
  ownDeadLetterExchange: string | null;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** RabbitMQ 4.0 gave quorum queues a delivery limit of 20 when they set none (-1 turns it off). */
export const RABBITMQ4_DEFAULT_DELIVERY_LIMIT = 20;

/** The major version of a `rabbitmq_version` string ("4.0.5" → 4), or null when it cannot be read. */
export function majorVersionOf(version: string | null | undefined): number | null {
  const m = /^(\d+)\./.exec(version ?? "");
  return m ? Number(m[1]) : null;
}

/**
 * Type and delivery limit of a queue as the management API describes it, on a broker of this
 * version (`rabbitmq_version` from /api/overview; null when unknown: no default is assumed).
 */
export function queueKindOf(q: MgmtQueue, brokerVersion: string | null = null): QueueKind {
  const args = q.arguments ?? {};
  const pol = policyOf(q);
  const limits = [num(args["x-delivery-limit"]), num(pol["delivery-limit"])].filter((x): x is number => x !== null);
  const t = deadLetterTarget(q);
  const queueType = q.type ?? str(args["x-queue-type"]) ?? "classic";
  const own = { queueType, ownDeadLetterExchange: t ? t.exchange : null };
  // A negative limit is "no limit" (4.x: -1 turns the default off).
  const set = limits.filter((x) => x >= 0);
  if (set.length) return { ...own, deliveryLimit: Math.min(...set) };
  const major = majorVersionOf(brokerVersion);
  if (queueType === "quorum" && limits.length === 0 && major !== null && major >= 4) {
    return { ...own, deliveryLimit: RABBITMQ4_DEFAULT_DELIVERY_LIMIT, defaultLimit: true };
  }
  return { ...own, deliveryLimit: null };
}

/**
 * Queue argument the console's move to safety declares its target with (value: the DLQ's name).
 * RabbitMQ keeps unknown x-arguments and leaves them out of its equivalence checks, so it marks the
 * queue as a safe copy for as long as it exists, without changing how the queue behaves.
 */
export const SAFE_COPY_ARG = "x-dlq-safe-copy-of";

/** Safe copy name → the DLQ it was made from, for queues carrying `SAFE_COPY_ARG`. */
export function safeCopiesOf(queues: MgmtQueue[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const q of queues) {
    const of = str(q.arguments?.[SAFE_COPY_ARG]);
    if (of && of !== q.name) out.set(q.name, of);
  }
  return out;
}
