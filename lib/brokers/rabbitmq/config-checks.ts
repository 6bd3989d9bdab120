/**
 * RabbitMQ configuration checks over one look at the management API (queues with their effective
 * policy, exchanges, bindings, policies, the broker's version): the faults that lose or risk dead
 * letters. Pure functions; how RabbitMQ resolves a queue argument against a policy key follows
 * rabbit_amqqueue_process (classic) and rabbit_quorum_queue (quorum) as of 3.10 to 4.x.
 */
import type { ConfigFinding } from "@/lib/brokers/contract/inspection";
import type { MgmtBinding, MgmtExchange, MgmtPolicy, MgmtQueue } from "@/lib/brokers/rabbitmq/management";
import { deadLetterTarget, queueKindOf, topicMatches } from "@/lib/brokers/rabbitmq/discovery";

/** What the checks read: the management API's answers for one vhost. */
export interface BrokerAnswers {
  queues: MgmtQueue[];
  bindings: MgmtBinding[];
  exchanges: MgmtExchange[];
  policies: MgmtPolicy[];
  /** `rabbitmq_version` from /api/overview; null when unknown (RabbitMQ 4's defaults are then not assumed). */
  version: string | null;
}

export interface CheckContext {
  vhost: string;
  /** The DLQs `listDlqs` lists (configured, discovered, safe copies). */
  dlqs: ReadonlySet<string>;
  /** Configured DLQs with the origin the config names, to say which DLQ a source's fault concerns. */
  configured: ReadonlyArray<{ name: string; origin?: string }>;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function policyOf(q: MgmtQueue): Record<string, unknown> {
  const p = q.effective_policy_definition;
  return p && !Array.isArray(p) && typeof p === "object" ? p : {};
}

/** A setting as RabbitMQ applies it, and where it comes from (for the operator's fix). */
export interface Setting<T> {
  value: T;
  from: "argument" | "policy";
  /** The queue argument or policy key that sets it. */
  key: string;
}

/** min(argument, policy): RabbitMQ applies the lower of the two for TTLs and length limits. */
function lowest(q: MgmtQueue, arg: string, key: string): Setting<number> | null {
  const a = num(q.arguments?.[arg]);
  const p = num(policyOf(q)[key]);
  if (a === null && p === null) return null;
  if (p === null || (a !== null && a <= p)) return { value: a!, from: "argument", key: arg };
  return { value: p, from: "policy", key };
}

function argFirst(q: MgmtQueue, arg: string, key: string): Setting<string> | null {
  const a = str(q.arguments?.[arg]);
  if (a !== null) return { value: a, from: "argument", key: arg };
  const p = str(policyOf(q)[key]);
  return p !== null ? { value: p, from: "policy", key } : null;
}

function policyFirst(q: MgmtQueue, arg: string, key: string): Setting<string> | null {
  const p = str(policyOf(q)[key]);
  if (p !== null) return { value: p, from: "policy", key };
  const a = str(q.arguments?.[arg]);
  return a !== null ? { value: a, from: "argument", key: arg } : null;
}

export function queueTypeOf(q: MgmtQueue): string {
  return q.type ?? str(q.arguments?.["x-queue-type"]) ?? "classic";
}

/** Message TTL as RabbitMQ applies it: the lower of x-message-ttl and the effective policy's message-ttl. */
export function messageTtlOf(q: MgmtQueue): Setting<number> | null {
  return lowest(q, "x-message-ttl", "message-ttl");
}

/** x-overflow / overflow: a policy wins over the argument on quorum queues, the argument wins on classic ones. */
export function overflowOf(q: MgmtQueue): Setting<string> | null {
  return queueTypeOf(q) === "quorum" ? policyFirst(q, "x-overflow", "overflow") : argFirst(q, "x-overflow", "overflow");
}

/**
 * How a quorum queue dead-letters: at-least-once only with dead-letter-strategy at-least-once AND
 * overflow reject-publish (with drop-head, RabbitMQ falls back to at-most-once and logs a warning).
 */
export function deadLetterStrategyOf(q: MgmtQueue): {
  effective: "at-least-once" | "at-most-once";
  strategy: Setting<string> | null;
  overflow: Setting<string> | null;
} {
  const strategy = argFirst(q, "x-dead-letter-strategy", "dead-letter-strategy");
  const overflow = overflowOf(q);
  const effective =
    strategy?.value === "at-least-once" && overflow?.value === "reject-publish" ? "at-least-once" : "at-most-once";
  return { effective, strategy, overflow };
}

/** Where a setting comes from, in the operator's words (the effective policy merges the policy and the operator policy). */
function settingWords(s: Setting<unknown>, q: MgmtQueue): string {
  if (s.from === "argument") return `queue argument ${s.key}`;
  const names = [
    q.policy ? `policy "${q.policy}"` : null,
    q.operator_policy ? `operator policy "${q.operator_policy}"` : null,
  ].filter(Boolean);
  return `key ${s.key} of ${names.length ? names.join(" or ") : "a policy"}`;
}

const msWords = (ms: number) => (ms >= 1000 ? `${formatMs(ms)} (${ms} ms)` : formatMs(ms));

/** Where RabbitMQ routes a message; `key` null: the message's routing key is not known here. */
class Router {
  private readonly byExchange = new Map<string, MgmtBinding[]>();
  private readonly byQueue = new Map<string, MgmtBinding[]>();
  private readonly exchanges: Map<string, MgmtExchange>;
  private readonly policies: Map<string, MgmtPolicy>;
  readonly queueNames: Set<string>;

  constructor(a: BrokerAnswers) {
    for (const b of a.bindings) {
      const list = this.byExchange.get(b.source) ?? [];
      list.push(b);
      this.byExchange.set(b.source, list);
      if (b.destination_type === "queue" && b.source !== "") {
        const to = this.byQueue.get(b.destination) ?? [];
        to.push(b);
        this.byQueue.set(b.destination, to);
      }
    }
    this.exchanges = new Map(a.exchanges.map((e) => [e.name, e]));
    this.policies = new Map(a.policies.map((p) => [p.name, p]));
    this.queueNames = new Set(a.queues.map((q) => q.name));
  }

  exists(exchange: string): boolean {
    return exchange === "" || this.exchanges.has(exchange);
  }

  typeOf(exchange: string): string {
    return this.exchanges.get(exchange)?.type ?? "direct";
  }

  /** Bindings to the queue other than the default exchange's. */
  bindingsTo(queue: string): MgmtBinding[] {
    return this.byQueue.get(queue) ?? [];
  }

  /** The exchange's alternate exchange: its alternate-exchange argument, else its policy's key. */
  private alternateOf(exchange: string): string | null {
    const x = this.exchanges.get(exchange);
    if (!x) return null;
    const arg = str(x.arguments?.["alternate-exchange"]);
    if (arg !== null) return arg;
    const pol = x.policy ? this.policies.get(x.policy) : undefined;
    return str(pol?.definition["alternate-exchange"]);
  }

  /** Queues a message published to `exchange` with routing key `key` reaches. */
  route(exchange: string, key: string | null, seen = new Set<string>()): Set<string> {
    const out = new Set<string>();
    if (exchange === "") {
      // The default exchange routes to the queue named by the key, when it exists.
      if (key !== null && this.queueNames.has(key)) out.add(key);
      return out;
    }
    if (seen.has(exchange) || !this.exchanges.has(exchange)) return out;
    seen.add(exchange);
    const type = this.typeOf(exchange);
    for (const b of this.byExchange.get(exchange) ?? []) {
      // Headers, fanout, plugin types and unknown keys: any binding is taken as a route (the
      // check must not call a working setup broken; it flags only what surely routes nowhere).
      const matches =
        key === null || type === "fanout" || !["direct", "topic"].includes(type)
          ? true
          : type === "topic"
            ? topicMatches(b.routing_key, key)
            : b.routing_key === key;
      if (!matches) continue;
      if (b.destination_type === "queue") out.add(b.destination);
      else for (const q of this.route(b.destination, key, seen)) out.add(q);
    }
    if (out.size === 0) {
      const ae = this.alternateOf(exchange);
      if (ae !== null) for (const q of this.route(ae, key, seen)) out.add(q);
    }
    return out;
  }
}

/**
 * The routing keys a queue's dead letters carry: the dead-letter routing key when set, else the
 * keys the letters were published with, taken from the queue's bindings (the queue's own name
 * when it is bound only to the default exchange). Null: a key that cannot be known here (a
 * topic pattern, a fanout or headers binding).
 */
function deadLetterKeys(q: MgmtQueue, routingKey: string | undefined, router: Router): Array<string | null> {
  if (routingKey !== undefined) return [routingKey];
  const bound = router.bindingsTo(q.name);
  if (bound.length === 0) return [q.name];
  const keys = new Set<string | null>();
  for (const b of bound) {
    const type = router.typeOf(b.source);
    if (type === "direct") keys.add(b.routing_key);
    else if (type === "topic" && !/(^|\.)[*#](\.|$)/.test(b.routing_key)) keys.add(b.routing_key);
    else keys.add(null);
  }
  return [...keys];
}

/** Queue names starting with amq. are reserved: only the broker creates them (amq.gen-… for server-named queues). */
const SERVER_NAMED = "amq.";

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * How to set policy keys on one queue. RabbitMQ applies one policy per queue (the highest
 * priority match), so keys go into the policy already in force, never a second one beside it.
 */
function policyFix(q: MgmtQueue, definition: Record<string, string>): string {
  const json = JSON.stringify(definition);
  return q.policy
    ? `add ${json.slice(1, -1)} to the definition of policy "${q.policy}", which applies to it (one policy applies per queue: a second one would replace it)`
    : `a policy: rabbitmqctl set_policy --apply-to queues <name> '^${escapeRegex(q.name)}$' '${json}'`;
}

/** Every configuration finding for one vhost. */
export function configFindings(a: BrokerAnswers, ctx: CheckContext): ConfigFinding[] {
  const router = new Router(a);
  const findings: ConfigFinding[] = [];
  const objectOf = (q: MgmtQueue) => `queue ${q.name} (vhost ${ctx.vhost})`;
  const dlxName = (x: string) => (x === "" ? "the default exchange" : `exchange "${x}"`);
  // Every dead-letter target is a DLQ for check 1, listed or not (discovery may be off).
  const targets = new Set<string>();
  const routed = new Map<string, { keys: Array<string | null>; lost: Array<string | null>; dest: Set<string> }>();
  for (const q of a.queues) {
    const t = deadLetterTarget(q);
    if (!t) continue;
    const keys = deadLetterKeys(q, t.routingKey, router);
    const lost: Array<string | null> = [];
    const dest = new Set<string>();
    for (const key of keys) {
      const to = router.route(t.exchange, key);
      if (to.size === 0) lost.push(key);
      for (const d of to) dest.add(d);
    }
    dest.delete(q.name);
    routed.set(q.name, { keys, lost, dest });
    for (const d of dest) targets.add(d);
  }
  /** The DLQ a queue's finding concerns: itself when it is one, else where it dead-letters, else the DLQ the config gives it as origin. */
  const dlqFor = (q: MgmtQueue): string | null => {
    if (ctx.dlqs.has(q.name)) return q.name;
    const listed = [...(routed.get(q.name)?.dest ?? [])].filter((d) => ctx.dlqs.has(d)).sort();
    if (listed.length) return listed[0];
    return ctx.configured.find((c) => c.origin === q.name)?.name ?? null;
  };

  for (const q of [...a.queues].sort((x, y) => x.name.localeCompare(y.name))) {
    const type = queueTypeOf(q);
    const t = deadLetterTarget(q);
    const object = objectOf(q);
    const dlq = dlqFor(q);
    const quorum = type === "quorum";
    const strategy = quorum ? deadLetterStrategyOf(q) : null;

    // 3. A quorum queue that drops letters past its delivery limit.
    const kind = queueKindOf(q, a.version);
    const limitWithoutDlx = quorum && kind.deliveryLimit !== null && t === null;
    if (limitWithoutDlx) {
      findings.push({
        code: "rabbitmq.delivery_limit_without_dlx",
        severity: "critical",
        object,
        dlq,
        why:
          `Quorum queue "${q.name}" has a delivery limit of ${kind.deliveryLimit}` +
          `${kind.defaultLimit ? " (RabbitMQ 4's default: the queue sets none)" : ""} and no dead-letter exchange: ` +
          `a letter delivered ${kind.deliveryLimit} times (consumers that crash or nack with requeue${ctx.dlqs.has(q.name) ? ", and every read of this DLQ by the console" : ""}) is dropped for good, without a trace.`,
        fix:
          `Set a dead-letter exchange bound to a DLQ: the queue argument x-dead-letter-exchange (with x-dead-letter-routing-key) on a new declaration, or ` +
          `${policyFix(q, { "dead-letter-exchange": "<dlx>", "dead-letter-strategy": "at-least-once", overflow: "reject-publish" })}.`,
      });
    }

    // 1. Consumers that may reject letters with nowhere to put them. Broker-named, exclusive and
    // auto-delete queues are private to one client; streams never dead-letter; DLQs end the chain.
    const privateQueue = q.exclusive === true || q.auto_delete === true || q.name.startsWith(SERVER_NAMED);
    if (
      !t &&
      !limitWithoutDlx &&
      (q.consumers ?? 0) > 0 &&
      !privateQueue &&
      type !== "stream" &&
      !ctx.dlqs.has(q.name) &&
      !targets.has(q.name)
    ) {
      findings.push({
        code: "rabbitmq.no_dead_letter_exchange",
        severity: "warning",
        object,
        dlq,
        why:
          `Queue "${q.name}" has ${q.consumers} consumer(s) and no dead-letter exchange: a letter they reject ` +
          `(basic.reject or basic.nack with requeue=false), or one that expires or overflows, is dropped, not kept in a DLQ.`,
        fix:
          `Give it a dead-letter exchange bound to a DLQ: the queue argument x-dead-letter-exchange (and x-dead-letter-routing-key) on a new declaration, ` +
          `or ${policyFix(q, { "dead-letter-exchange": "<dlx>" })}.`,
      });
    }

    if (t) {
      const kept = strategy?.effective === "at-least-once";
      const fate = kept
        ? `its at-least-once dead-lettering keeps them in "${q.name}" (messages_dlx) and retries until they can be routed, so they pile up there`
        : "RabbitMQ drops them silently";
      // 2. The dead-letter exchange is missing, or routes the letters' keys nowhere.
      if (!router.exists(t.exchange)) {
        findings.push({
          code: "rabbitmq.dlx_missing",
          severity: kept ? "warning" : "critical",
          object,
          dlq,
          why: `Queue "${q.name}" dead-letters to exchange "${t.exchange}", which does not exist in vhost ${ctx.vhost}: ${fate}.`,
          fix:
            `Declare the exchange (rabbitmqadmin declare exchange --vhost=${ctx.vhost} name=${t.exchange} type=direct durable=true) and bind the DLQ to it ` +
            `with the routing key the letters carry, or point x-dead-letter-exchange (or the policy's dead-letter-exchange) at an exchange that exists.`,
        });
      } else {
        const lost = routed.get(q.name)?.lost ?? [];
        if (lost.length) {
          const keyWords = lost.map((k) => (k === null ? "any routing key" : `routing key "${k}"`)).join(", ");
          const where =
            t.exchange === ""
              ? `the default exchange, which routes ${keyWords} to no queue (no queue of that name exists)`
              : `${dlxName(t.exchange)}, which routes ${keyWords} to no queue`;
          const keySource =
            t.routingKey !== undefined
              ? "its dead-letter routing key"
              : "the routing keys its letters were published with";
          findings.push({
            code: "rabbitmq.dlx_unroutable",
            severity: kept ? "warning" : "critical",
            object,
            dlq,
            why: `Queue "${q.name}" dead-letters with ${keySource} to ${where}: ${fate}.`,
            fix:
              t.exchange === "" && t.routingKey !== undefined
                ? `Declare the queue "${t.routingKey}", or set x-dead-letter-routing-key (or the policy's dead-letter-routing-key) to the name of the DLQ.`
                : `Bind the DLQ to ${dlxName(t.exchange)} with ${lost.some((k) => k === null) ? "a binding that matches the letters (e.g. # on a topic exchange)" : `routing key ${lost.map((k) => `"${k}"`).join(", ")}`} ` +
                  `(rabbitmqadmin declare binding --vhost=${ctx.vhost} source=${t.exchange} destination=<dlq> routing_key=<key>), or set x-dead-letter-routing-key to a key that is bound.`,
          });
        }
      }

      // 4. Quorum dead-lettering without delivery guarantee.
      if (quorum && strategy && strategy.effective === "at-most-once") {
        const fellBack = strategy.strategy?.value === "at-least-once";
        findings.push({
          code: "rabbitmq.dead_letter_at_most_once",
          severity: "warning",
          object,
          dlq,
          why: fellBack
            ? `Quorum queue "${q.name}" asks for at-least-once dead-lettering (${settingWords(strategy.strategy!, q)}) but its overflow is ${strategy.overflow?.value ?? "drop-head (the default)"}, so RabbitMQ falls back to at-most-once: a letter dead-lettered while its DLQ is unavailable (leader down, DLQ full or rejecting) is lost.`
            : `Quorum queue "${q.name}" dead-letters at-most-once (dead-letter-strategy ${strategy.strategy?.value ?? "not set"}): RabbitMQ does not wait for the DLQ to confirm, so a letter dead-lettered while its DLQ is unavailable is lost.`,
          fix:
            strategy.strategy?.from === "argument" && !fellBack
              ? `Its queue argument x-dead-letter-strategy=${strategy.strategy.value} wins over any policy and cannot change: declare a new queue with x-dead-letter-strategy=at-least-once and x-overflow=reject-publish, and move the consumers and letters to it.`
              : `Set dead-letter-strategy at-least-once AND overflow reject-publish (queue arguments cannot change after declaration; a policy's overflow wins over the argument on quorum queues): ` +
                `${policyFix(q, fellBack ? { overflow: "reject-publish" } : { "dead-letter-strategy": "at-least-once", overflow: "reject-publish" })}; or declare a new queue with x-dead-letter-strategy=at-least-once and x-overflow=reject-publish.`,
        });
      }
    }

    // 5. A DLQ that expires, drops or deletes its own letters.
    if (ctx.dlqs.has(q.name)) findings.push(...dlqLimits(q, t, object));
  }
  return findings;
}

function dlqLimits(q: MgmtQueue, t: ReturnType<typeof deadLetterTarget>, object: string): ConfigFinding[] {
  const out: ConfigFinding[] = [];
  const onward = t
    ? `dead-lettered onward to ${t.exchange === "" ? "the default exchange" : `exchange "${t.exchange}"`} and leave the DLQ`
    : "deleted for good";
  const removal = (s: Setting<unknown>) =>
    s.from === "argument"
      ? `Queue arguments cannot change after declaration: declare a new DLQ without ${s.key}, move the letters there (the console's redrive or a shovel) and point the sources' dead-lettering at it.`
      : `Remove ${s.key} from the ${settingWords(s, q).replace(/^key \S+ of /, "")} (rabbitmqctl set_policy with a definition without it, or clear_policy; set_operator_policy for an operator policy), or exclude this queue from its pattern.`;
  const ttl = messageTtlOf(q);
  if (ttl) {
    out.push({
      code: "rabbitmq.dlq_message_ttl",
      severity: t ? "warning" : "critical",
      object,
      dlq: q.name,
      why: `DLQ "${q.name}" expires letters ${msWords(ttl.value)} after they enter it (${settingWords(ttl, q)}): unread letters are then ${onward}.`,
      fix: removal(ttl),
    });
  }
  const expires = lowest(q, "x-expires", "expires");
  if (expires) {
    out.push({
      code: "rabbitmq.dlq_expires",
      severity: "critical",
      object,
      dlq: q.name,
      why: `DLQ "${q.name}" is deleted, with every letter in it, after ${msWords(expires.value)} without consumers or redeclaration (${settingWords(expires, q)}); a DLQ usually has no consumer.`,
      fix: removal(expires),
    });
  }
  const len = lowest(q, "x-max-length", "max-length");
  const bytes = lowest(q, "x-max-length-bytes", "max-length-bytes");
  if (len || bytes) {
    const overflow = overflowOf(q)?.value ?? "drop-head";
    const limit = [
      len ? `${len.value} letters (${settingWords(len, q)})` : null,
      bytes ? `${bytes.value} bytes (${settingWords(bytes, q)})` : null,
    ]
      .filter(Boolean)
      .join(" or ");
    const full =
      overflow === "drop-head"
        ? `the oldest letters are ${t ? `dead-lettered onward to ${t.exchange === "" ? "the default exchange" : `exchange "${t.exchange}"`}` : "dropped"} to make room`
        : `new letters are refused (overflow ${overflow}), and a source that dead-letters at-most-once loses them`;
    out.push({
      code: "rabbitmq.dlq_max_length",
      severity: "warning",
      object,
      dlq: q.name,
      why: `DLQ "${q.name}" holds at most ${limit}: when it is full, ${full}.`,
      fix: [...new Set([len, bytes].filter((s): s is Setting<number> => s !== null).map(removal))].join(" "),
    });
  }
  return out;
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const units: Array<[number, string]> = [
    [86_400_000, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
    [1000, "second"],
  ];
  for (const [size, name] of units) {
    if (ms >= size) {
      const n = Math.round((ms / size) * 10) / 10;
      return `${n} ${name}${n === 1 ? "" : "s"}`;
    }
  }
  return `${ms} ms`;
}
