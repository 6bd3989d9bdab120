import { afterEach, describe, expect, it, vi } from "vitest";
import type { ConfigFinding } from "@/lib/brokers/contract/inspection";
import { BrokerError } from "@/lib/brokers/contract/errors";
import {
  ManagementClient,
  type MgmtBinding,
  type MgmtExchange,
  type MgmtPolicy,
  type MgmtQueue,
} from "@/lib/brokers/rabbitmq/management";
import {
  configFindings,
  deadLetterStrategyOf,
  formatMs,
  messageTtlOf,
  type BrokerAnswers,
} from "@/lib/brokers/rabbitmq/config-checks";
import {
  inspectRabbit,
  inspectionFrom,
  oldestAtOf,
  vitalsOf,
  type InspectContext,
} from "@/lib/brokers/rabbitmq/inspect";

// Shapes as RabbitMQ 3.10.8 answers /api/queues/%2F?columns=name,vhost,type,arguments,effective_policy_definition,
// policy,messages,messages_ready,messages_unacknowledged,consumers,operator_policy,durable,exclusive,auto_delete,head_message_timestamp
function classic(name: string, over: Partial<MgmtQueue> = {}): MgmtQueue {
  return {
    name,
    vhost: "/",
    type: "classic",
    arguments: { "x-queue-type": "classic" },
    effective_policy_definition: {},
    policy: null,
    operator_policy: null,
    messages: 0,
    messages_ready: 0,
    messages_unacknowledged: 0,
    consumers: 0,
    durable: true,
    exclusive: false,
    auto_delete: false,
    head_message_timestamp: null,
    ...over,
  };
}
// Quorum queues have no head_message_timestamp at all in the 3.10 listing.
function quorum(name: string, over: Partial<MgmtQueue> = {}): MgmtQueue {
  const q: MgmtQueue = {
    name,
    vhost: "/",
    type: "quorum",
    arguments: { "x-queue-type": "quorum" },
    effective_policy_definition: {},
    policy: null,
    operator_policy: null,
    messages: 0,
    messages_ready: 0,
    messages_unacknowledged: 0,
    consumers: 0,
    durable: true,
    exclusive: false,
    auto_delete: false,
    ...over,
  };
  return q;
}
const DEFAULT_EXCHANGES: MgmtExchange[] = [
  { name: "", type: "direct", arguments: {} },
  { name: "amq.direct", type: "direct", arguments: {} },
  { name: "amq.fanout", type: "fanout", arguments: {} },
  { name: "amq.headers", type: "headers", arguments: {} },
  { name: "amq.match", type: "headers", arguments: {} },
  { name: "amq.rabbitmq.trace", type: "topic", arguments: {} },
  { name: "amq.topic", type: "topic", arguments: {} },
];
const bind = (
  source: string,
  destination: string,
  routing_key: string,
  destination_type: "queue" | "exchange" = "queue",
): MgmtBinding => ({ source, destination, destination_type, routing_key, arguments: {} });

/** The broker's answers, with the default exchange's implicit binding for every queue, as /api/bindings lists them. */
function answers(
  queues: MgmtQueue[],
  o: { exchanges?: MgmtExchange[]; bindings?: MgmtBinding[]; policies?: MgmtPolicy[]; version?: string | null } = {},
): BrokerAnswers {
  return {
    queues,
    exchanges: [...DEFAULT_EXCHANGES, ...(o.exchanges ?? [])],
    bindings: [...queues.map((q) => bind("", q.name, q.name)), ...(o.bindings ?? [])],
    policies: o.policies ?? [],
    version: o.version === undefined ? "3.10.8" : o.version,
  };
}
const ctx = (dlqs: string[], configured: Array<{ name: string; origin?: string }> = []) => ({
  vhost: "/",
  dlqs: new Set(dlqs),
  configured,
});
const codes = (f: ConfigFinding[]) => f.map((x) => `${x.code} ${x.object} dlq=${x.dlq}`).sort();

describe("vitals", () => {
  const now = Date.parse("2026-03-01T12:00:00Z");

  it("depth, head timestamp (classic) and retention from the TTL argument; no counter", () => {
    const q = classic("orders.dlq", {
      messages: 3,
      messages_ready: 3,
      head_message_timestamp: 1_772_366_400,
      arguments: { "x-queue-type": "classic", "x-message-ttl": 3_600_000 },
    });
    expect(vitalsOf("orders.dlq", q, undefined, now)).toEqual({
      name: "orders.dlq",
      queueType: "classic",
      depth: 3,
      inFlight: 0,
      enteredTotal: null,
      oldestAt: "2026-03-01T12:00:00.000Z",
      retentionMs: 3_600_000,
      retentionClock: "arrival",
    });
  });

  it("quorum queues give no head timestamp", () => {
    const v = vitalsOf("q.dlq", quorum("q.dlq", { messages: 5 }), undefined, now);
    expect(v).toMatchObject({ queueType: "quorum", depth: 5, oldestAt: null, retentionMs: null, enteredTotal: null });
  });

  it("the lower of the TTL argument and the policy's message-ttl applies", () => {
    const both = classic("a", {
      arguments: { "x-message-ttl": 60_000 },
      effective_policy_definition: { "message-ttl": 1000 },
      policy: "short",
    });
    expect(messageTtlOf(both)).toEqual({ value: 1000, from: "policy", key: "message-ttl" });
    const argLower = { ...both, effective_policy_definition: { "message-ttl": 120_000 } };
    expect(messageTtlOf(argLower)).toEqual({ value: 60_000, from: "argument", key: "x-message-ttl" });
    expect(vitalsOf("a", both, undefined, now).retentionMs).toBe(1000);
  });

  it("ignores a head timestamp in milliseconds, a missing one and one on an empty queue", () => {
    expect(oldestAtOf(classic("a", { messages: 1, head_message_timestamp: 1_772_366_400_000 }), now)).toBeNull();
    expect(oldestAtOf(classic("a", { messages: 1, head_message_timestamp: null }), now)).toBeNull();
    expect(oldestAtOf(classic("a", { messages: 0, head_message_timestamp: 1_772_366_400 }), now)).toBeNull();
  });

  it("a configured DLQ that does not exist has no vitals, under its configured type", () => {
    expect(vitalsOf("gone", undefined, "quorum", now)).toEqual({
      name: "gone",
      queueType: "quorum",
      depth: null,
      inFlight: null,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock: "arrival",
    });
  });

  it("one entry per listed DLQ, in the listed order, missing ones included", () => {
    const a = answers([classic("b.dlq", { messages: 2 }), classic("a.dlq", { messages: 1 })]);
    const r = inspectionFrom(
      a,
      { vhost: "/", names: ["a.dlq", "b.dlq", "c.dlq"], configured: [{ name: "c.dlq" }] },
      now,
    );
    expect(r.dlqs.map((d) => [d.name, d.depth])).toEqual([
      ["a.dlq", 1],
      ["b.dlq", 2],
      ["c.dlq", null],
    ]);
  });
});

describe("finding 1: consumers and no dead-letter exchange", () => {
  it("flags a shared queue with consumers", () => {
    const f = configFindings(answers([classic("orders", { consumers: 2 })]), ctx([]));
    expect(codes(f)).toEqual(["rabbitmq.no_dead_letter_exchange queue orders (vhost /) dlq=null"]);
    expect(f[0].severity).toBe("warning");
    expect(f[0].fix).toMatch(/x-dead-letter-exchange/);
  });

  it("not when it has a DLX (argument or policy), no consumer, or is private, a stream or a DLQ", () => {
    const qs = [
      classic("with-arg", { consumers: 1, arguments: { "x-dead-letter-exchange": "dlx" } }),
      classic("with-policy", {
        consumers: 1,
        policy: "dl",
        effective_policy_definition: { "dead-letter-exchange": "dlx" },
      }),
      classic("idle"),
      classic("amq.gen-flfUWTEuI6jWyJNxMMZw-w", { consumers: 1, exclusive: true, durable: false }),
      classic("excl", { consumers: 1, exclusive: true }),
      classic("autodel", { consumers: 1, auto_delete: true }),
      { ...classic("events", { consumers: 1 }), type: "stream", arguments: { "x-queue-type": "stream" } },
      classic("listed.dlq", { consumers: 1 }),
      classic("unlisted.dlq", { consumers: 1 }),
      classic("feeds-unlisted", {
        arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "unlisted.dlq" },
      }),
    ];
    const f = configFindings(
      answers(qs, { exchanges: [{ name: "dlx", type: "fanout" }], bindings: [bind("dlx", "listed.dlq", "")] }),
      ctx(["listed.dlq"]),
    );
    expect(f.filter((x) => x.code === "rabbitmq.no_dead_letter_exchange")).toEqual([]);
  });

  it("names the configured DLQ whose origin the queue is", () => {
    const f = configFindings(
      answers([classic("orders", { consumers: 1 }), classic("orders.dlq")]),
      ctx(["orders.dlq"], [{ name: "orders.dlq", origin: "orders" }]),
    );
    expect(codes(f)).toEqual(["rabbitmq.no_dead_letter_exchange queue orders (vhost /) dlq=orders.dlq"]);
  });
});

describe("finding 2: dead-letter exchange missing or routing nowhere", () => {
  const dlq = classic("orders.dlq");

  it("a missing exchange is critical", () => {
    const src = classic("orders", {
      arguments: { "x-dead-letter-exchange": "orders.dlx", "x-dead-letter-routing-key": "orders" },
    });
    const f = configFindings(answers([src, dlq]), ctx(["orders.dlq"]));
    expect(codes(f)).toEqual(["rabbitmq.dlx_missing queue orders (vhost /) dlq=null"]);
    expect(f[0]).toMatchObject({ severity: "critical" });
    expect(f[0].why).toMatch(/"orders\.dlx", which does not exist/);
    const fixed = answers([src, dlq], {
      exchanges: [{ name: "orders.dlx", type: "direct" }],
      bindings: [bind("orders.dlx", "orders.dlq", "orders")],
    });
    expect(configFindings(fixed, ctx(["orders.dlq"]))).toEqual([]);
  });

  it("a direct exchange without a binding for the dead-letter routing key", () => {
    const src = classic("orders", {
      arguments: { "x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "orders" },
    });
    const f = configFindings(
      answers([src, dlq], {
        exchanges: [{ name: "dlx", type: "direct" }],
        bindings: [bind("dlx", "orders.dlq", "payments")],
      }),
      ctx(["orders.dlq"]),
    );
    expect(codes(f)).toEqual(["rabbitmq.dlx_unroutable queue orders (vhost /) dlq=null"]);
    expect(f[0].why).toMatch(/routing key "orders"/);
    expect(f[0].fix).toMatch(/routing key "orders"/);
  });

  it("topic, fanout, exchange-to-exchange and alternate exchanges route", () => {
    const src = (x: string) =>
      classic(`src-${x}`, {
        arguments: { "x-dead-letter-exchange": x, "x-dead-letter-routing-key": "orders.eu.created" },
      });
    const a = answers([src("topic"), src("fanout"), src("e2e"), src("ae-arg"), src("ae-pol"), src("topic-miss"), dlq], {
      exchanges: [
        { name: "topic", type: "topic" },
        { name: "topic-miss", type: "topic" },
        { name: "fanout", type: "fanout" },
        { name: "e2e", type: "direct" },
        { name: "inner", type: "topic" },
        { name: "ae-arg", type: "direct", arguments: { "alternate-exchange": "catch-all" } },
        { name: "ae-pol", type: "direct", arguments: {}, policy: "ae" },
        { name: "catch-all", type: "fanout" },
      ],
      bindings: [
        bind("topic", "orders.dlq", "orders.#"),
        bind("topic-miss", "orders.dlq", "orders.*"),
        bind("fanout", "orders.dlq", ""),
        bind("e2e", "inner", "orders.eu.created", "exchange"),
        bind("inner", "orders.dlq", "#"),
        bind("ae-arg", "orders.dlq", "nothing"),
        bind("catch-all", "orders.dlq", ""),
      ],
      policies: [
        {
          name: "ae",
          vhost: "/",
          pattern: "^ae-pol$",
          "apply-to": "exchanges",
          definition: { "alternate-exchange": "catch-all" },
          priority: 0,
        },
      ],
    });
    expect(codes(configFindings(a, ctx(["orders.dlq"])))).toEqual([
      "rabbitmq.dlx_unroutable queue src-topic-miss (vhost /) dlq=null",
    ]);
  });

  it("without a dead-letter routing key, the keys the source is bound with", () => {
    const x: MgmtExchange[] = [
      { name: "orders", type: "direct" },
      { name: "dlx", type: "direct" },
      { name: "events", type: "topic" },
    ];
    const src = classic("orders", { arguments: { "x-dead-letter-exchange": "dlx" } });
    const routed = answers([src, dlq], {
      exchanges: x,
      bindings: [bind("orders", "orders", "order.created"), bind("dlx", "orders.dlq", "order.created")],
    });
    expect(configFindings(routed, ctx(["orders.dlq"]))).toEqual([]);
    const wrong = answers([src, dlq], {
      exchanges: x,
      bindings: [bind("orders", "orders", "order.created"), bind("dlx", "orders.dlq", "orders")],
    });
    expect(codes(configFindings(wrong, ctx(["orders.dlq"])))).toEqual([
      "rabbitmq.dlx_unroutable queue orders (vhost /) dlq=null",
    ]);
    // Bound only to the default exchange: the letters carry the queue's own name.
    const own = answers([src, dlq], { exchanges: x, bindings: [bind("dlx", "orders.dlq", "orders")] });
    expect(codes(configFindings(own, ctx(["orders.dlq"])))).toEqual([]);
    // A topic pattern says nothing of the actual keys: flagged only when the DLX routes nothing at all.
    const pattern = answers([src, dlq], {
      exchanges: x,
      bindings: [bind("events", "orders", "order.*"), bind("dlx", "orders.dlq", "whatever")],
    });
    expect(configFindings(pattern, ctx(["orders.dlq"]))).toEqual([]);
    const none = answers([src, dlq], { exchanges: x, bindings: [bind("events", "orders", "order.*")] });
    const f = configFindings(none, ctx(["orders.dlq"]));
    expect(codes(f)).toEqual(["rabbitmq.dlx_unroutable queue orders (vhost /) dlq=null"]);
    expect(f[0].why).toMatch(/any routing key/);
  });

  it("the default exchange to a queue that does not exist", () => {
    const src = classic("orders", {
      arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq.typo" },
    });
    const f = configFindings(answers([src, dlq]), ctx(["orders.dlq"]));
    expect(codes(f)).toEqual(["rabbitmq.dlx_unroutable queue orders (vhost /) dlq=null"]);
    expect(f[0].fix).toMatch(/Declare the queue "orders\.dlq\.typo"/);
  });

  it("names the DLQ the letters reach, or the queue itself when it is a DLQ dead-lettering onward", () => {
    const x: MgmtExchange[] = [{ name: "dlx", type: "direct" }];
    const src = classic("orders", { arguments: { "x-dead-letter-exchange": "dlx" } });
    const chained = classic("orders.dlq", { arguments: { "x-dead-letter-exchange": "parking" } });
    const f = configFindings(
      answers([src, chained], { exchanges: x, bindings: [bind("dlx", "orders.dlq", "orders")] }),
      ctx(["orders.dlq"]),
    );
    expect(codes(f)).toEqual(["rabbitmq.dlx_missing queue orders.dlq (vhost /) dlq=orders.dlq"]);
  });

  it("at-least-once quorum dead-lettering keeps the letters: a warning", () => {
    const src = quorum("orders", {
      arguments: {
        "x-queue-type": "quorum",
        "x-dead-letter-exchange": "nope",
        "x-dead-letter-strategy": "at-least-once",
        "x-overflow": "reject-publish",
      },
    });
    const f = configFindings(answers([src]), ctx([]));
    expect(f.map((x) => [x.code, x.severity])).toEqual([["rabbitmq.dlx_missing", "warning"]]);
    expect(f[0].why).toMatch(/messages_dlx/);
  });
});

describe("finding 3: quorum delivery limit without a dead-letter exchange", () => {
  it("3.10: only with an explicit limit (argument or policy)", () => {
    const a = answers([
      quorum("limited", { arguments: { "x-queue-type": "quorum", "x-delivery-limit": 5 } }),
      quorum("policy-limited", { policy: "limits", effective_policy_definition: { "delivery-limit": 7 } }),
      quorum("unlimited"),
      quorum("with-dlx", {
        arguments: {
          "x-queue-type": "quorum",
          "x-delivery-limit": 5,
          "x-dead-letter-exchange": "",
          "x-dead-letter-routing-key": "limited",
          "x-dead-letter-strategy": "at-least-once",
          "x-overflow": "reject-publish",
        },
      }),
    ]);
    const f = configFindings(a, ctx([]));
    expect(codes(f)).toEqual([
      "rabbitmq.delivery_limit_without_dlx queue limited (vhost /) dlq=null",
      "rabbitmq.delivery_limit_without_dlx queue policy-limited (vhost /) dlq=null",
    ]);
    expect(f.every((x) => x.severity === "critical")).toBe(true);
    expect(f[0].why).toMatch(/delivery limit of 5 /);
  });

  it("4.x: every quorum queue without a DLX has RabbitMQ's default limit of 20, unless it turns it off with -1", () => {
    const a = answers(
      [
        quorum("plain", { consumers: 1 }),
        quorum("off", { arguments: { "x-queue-type": "quorum", "x-delivery-limit": -1 } }),
        classic("classic"),
      ],
      { version: "4.0.5" },
    );
    const f = configFindings(a, ctx([]));
    // The critical finding replaces the consumers warning on the same queue.
    expect(codes(f)).toEqual(["rabbitmq.delivery_limit_without_dlx queue plain (vhost /) dlq=null"]);
    expect(f[0].why).toMatch(/delivery limit of 20 \(RabbitMQ 4's default/);
  });

  it("a quorum DLQ without a DLX of its own is named as the DLQ concerned", () => {
    const f = configFindings(answers([quorum("orders.dlq")], { version: "4.0.5" }), ctx(["orders.dlq"]));
    expect(codes(f)).toEqual(["rabbitmq.delivery_limit_without_dlx queue orders.dlq (vhost /) dlq=orders.dlq"]);
  });
});

describe("finding 4: quorum at-most-once dead-lettering", () => {
  const dl = { "x-queue-type": "quorum", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq" };
  const dlq = quorum("orders.dlq", {
    arguments: {
      "x-queue-type": "quorum",
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": "parking",
      "x-dead-letter-strategy": "at-least-once",
      "x-overflow": "reject-publish",
    },
  });
  const parking = classic("parking");
  const run = (src: MgmtQueue) =>
    configFindings(answers([src, dlq, parking]), ctx(["orders.dlq", "parking"])).filter((f) =>
      f.object.startsWith("queue orders "),
    );

  it("strategy absent or at-most-once", () => {
    const f = run(quorum("orders", { arguments: dl }));
    expect(codes(f)).toEqual(["rabbitmq.dead_letter_at_most_once queue orders (vhost /) dlq=orders.dlq"]);
    expect(f[0].severity).toBe("warning");
    expect(f[0].fix).toMatch(/at-least-once.*reject-publish/);
    expect(
      codes(run(quorum("orders", { arguments: { ...dl, "x-dead-letter-strategy": "at-most-once" } }))),
    ).toHaveLength(1);
  });

  it("at-least-once without overflow reject-publish falls back", () => {
    const f = run(quorum("orders", { arguments: { ...dl, "x-dead-letter-strategy": "at-least-once" } }));
    expect(codes(f)).toEqual(["rabbitmq.dead_letter_at_most_once queue orders (vhost /) dlq=orders.dlq"]);
    expect(f[0].why).toMatch(/falls back to at-most-once/);
    expect(f[0].fix).toContain(
      `rabbitmqctl set_policy --apply-to queues <name> '^orders$' '{"overflow":"reject-publish"}'`,
    );
  });

  it("the fix extends the policy in force (one policy per queue), or asks for a new queue when an argument decides", () => {
    const withPolicy = run(
      quorum("orders", { arguments: dl, policy: "ha-orders", effective_policy_definition: { "max-length": 100000 } }),
    );
    expect(withPolicy[0].fix).toContain(
      `add "dead-letter-strategy":"at-least-once","overflow":"reject-publish" to the definition of policy "ha-orders"`,
    );
    const pinned = run(quorum("orders", { arguments: { ...dl, "x-dead-letter-strategy": "at-most-once" } }));
    expect(pinned[0].fix).toMatch(/x-dead-letter-strategy=at-most-once wins over any policy.*declare a new queue/);
  });

  it("at-least-once with reject-publish, from arguments or a policy", () => {
    expect(
      run(
        quorum("orders", {
          arguments: { ...dl, "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish" },
        }),
      ),
    ).toEqual([]);
    expect(
      run(
        quorum("orders", {
          arguments: dl,
          policy: "alo",
          effective_policy_definition: { "dead-letter-strategy": "at-least-once", overflow: "reject-publish" },
        }),
      ),
    ).toEqual([]);
  });

  it("a policy's overflow wins over the argument on a quorum queue; the argument's strategy wins over the policy's", () => {
    const q = quorum("orders", {
      arguments: { ...dl, "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish" },
      policy: "p",
      effective_policy_definition: { overflow: "drop-head" },
    });
    expect(deadLetterStrategyOf(q).effective).toBe("at-most-once");
    const q2 = quorum("orders", {
      arguments: { ...dl, "x-dead-letter-strategy": "at-most-once", "x-overflow": "reject-publish" },
      policy: "p",
      effective_policy_definition: { "dead-letter-strategy": "at-least-once" },
    });
    expect(deadLetterStrategyOf(q2).effective).toBe("at-most-once");
  });

  it("classic queues have no strategy to check", () => {
    expect(
      run(
        classic("orders", { arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq" } }),
      ),
    ).toEqual([]);
  });
});

describe("finding 5: a DLQ that expires, drops or deletes letters", () => {
  it("TTL without a DLX of its own: critical; with one: warning", () => {
    const lone = classic("a.dlq", { arguments: { "x-message-ttl": 86_400_000 } });
    const onward = classic("b.dlq", {
      arguments: { "x-message-ttl": 86_400_000, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "parking" },
    });
    const f = configFindings(answers([lone, onward, classic("parking")]), ctx(["a.dlq", "b.dlq", "parking"]));
    expect(f.map((x) => [x.code, x.dlq, x.severity])).toEqual([
      ["rabbitmq.dlq_message_ttl", "a.dlq", "critical"],
      ["rabbitmq.dlq_message_ttl", "b.dlq", "warning"],
    ]);
    expect(f[0].why).toMatch(/1 day \(86400000 ms\).*queue argument x-message-ttl.*deleted for good/);
    expect(f[0].fix).toMatch(/declare a new DLQ without x-message-ttl/);
  });

  it("TTL from a policy names the policy", () => {
    const f = configFindings(
      answers([classic("a.dlq", { policy: "ttl-all", effective_policy_definition: { "message-ttl": 500 } })]),
      ctx(["a.dlq"]),
    );
    expect(f.map((x) => x.code)).toEqual(["rabbitmq.dlq_message_ttl"]);
    expect(f[0].why).toMatch(/500 ms after .*key message-ttl of policy "ttl-all"/);
    expect(f[0].fix).toMatch(/Remove message-ttl from the policy "ttl-all"/);
  });

  it("max-length or max-length-bytes: warning; expires: critical", () => {
    const f = configFindings(
      answers([
        classic("a.dlq", { arguments: { "x-max-length": 1000 } }),
        classic("b.dlq", { arguments: { "x-max-length-bytes": 1_048_576, "x-overflow": "reject-publish" } }),
        classic("c.dlq", { arguments: { "x-expires": 3_600_000 } }),
      ]),
      ctx(["a.dlq", "b.dlq", "c.dlq"]),
    );
    expect(f.map((x) => [x.code, x.dlq, x.severity])).toEqual([
      ["rabbitmq.dlq_max_length", "a.dlq", "warning"],
      ["rabbitmq.dlq_max_length", "b.dlq", "warning"],
      ["rabbitmq.dlq_expires", "c.dlq", "critical"],
    ]);
    expect(f[0].why).toMatch(/oldest letters are dropped/);
    expect(f[1].why).toMatch(/refused \(overflow reject-publish\)/);
  });

  it("queues that are not DLQs may have TTLs and limits", () => {
    expect(
      configFindings(
        answers([
          classic("work", {
            arguments: {
              "x-message-ttl": 1000,
              "x-max-length": 5,
              "x-dead-letter-exchange": "",
              "x-dead-letter-routing-key": "work.dlq",
            },
          }),
          classic("work.dlq"),
        ]),
        ctx(["work.dlq"]),
      ),
    ).toEqual([]);
  });
});

it("formatMs", () => {
  expect([formatMs(500), formatMs(1000), formatMs(90_000), formatMs(86_400_000), formatMs(1_209_600_000)]).toEqual([
    "500 ms",
    "1 second",
    "1.5 minutes",
    "1 day",
    "14 days",
  ]);
});

describe("inspectRabbit over the management API (answers as RabbitMQ 4.0.5 gives them)", () => {
  afterEach(() => vi.unstubAllGlobals());

  const overview405 = {
    management_version: "4.0.5",
    rates_mode: "basic",
    product_version: "4.0.5",
    product_name: "RabbitMQ",
    rabbitmq_version: "4.0.5",
    cluster_name: "rabbit@broker-0",
    erlang_version: "26.2.5.6",
    node: "rabbit@broker-0",
  };
  const queues = [
    quorum("orders", { consumers: 3, messages: 0 }),
    quorum("payments", {
      arguments: {
        "x-queue-type": "quorum",
        "x-dead-letter-exchange": "",
        "x-dead-letter-routing-key": "payments.dlq",
        "x-dead-letter-strategy": "at-least-once",
        "x-overflow": "reject-publish",
      },
    }),
    {
      ...classic("payments.dlq", { messages: 4, head_message_timestamp: 1_772_366_400 }),
      arguments: { "x-queue-type": "classic" },
    },
  ];
  function stubBroker(overview: unknown, seen: string[]) {
    vi.stubGlobal("fetch", async (input: URL | string) => {
      const u = new URL(String(input));
      seen.push(u.pathname);
      const body =
        u.pathname === "/api/overview"
          ? overview
          : u.pathname === "/api/queues/%2F"
            ? queues
            : u.pathname === "/api/exchanges/%2F"
              ? DEFAULT_EXCHANGES
              : u.pathname === "/api/bindings/%2F"
                ? queues.map((q) => bind("", q.name, q.name))
                : u.pathname === "/api/policies/%2F"
                  ? []
                  : null;
      return body === null
        ? new Response('{"error":"Object Not Found","reason":"Not Found"}', { status: 404 })
        : Response.json(body);
    });
  }
  const context = (over: Partial<InspectContext> = {}): InspectContext => ({
    vhost: "/",
    endpoint: "broker-0:5672",
    displayName: "Prod RabbitMQ",
    mgmt: new ManagementClient("http://broker-0:15672", "guest", "guest"),
    discover: true,
    configured: [],
    dlqNames: (s) => ({ names: [...new Set([...s.discovered.keys()])].sort(), safeCopies: new Set() }),
    channel: () => Promise.reject(new Error("no AMQP in inspect")),
    // The clock the payments.dlq head timestamp (1_772_366_400 s) was stamped by.
    now: () => Date.parse("2026-03-01T12:00:00Z"),
    ...over,
  });

  it("five requests, the default delivery limit of 4.x, discovered DLQs' vitals", async () => {
    const seen: string[] = [];
    stubBroker(overview405, seen);
    const r = await inspectRabbit(context(), { minRetentionMs: 0 });
    expect(r.calls).toBe(5);
    expect(seen.sort()).toEqual([
      "/api/bindings/%2F",
      "/api/exchanges/%2F",
      "/api/overview",
      "/api/policies/%2F",
      "/api/queues/%2F",
    ]);
    expect(r.dlqs).toEqual([
      {
        name: "payments.dlq",
        queueType: "classic",
        depth: 4,
        inFlight: 0,
        enteredTotal: null,
        oldestAt: "2026-03-01T12:00:00.000Z",
        retentionMs: null,
        retentionClock: "arrival",
      },
    ]);
    expect(codes(r.findings)).toEqual(["rabbitmq.delivery_limit_without_dlx queue orders (vhost /) dlq=null"]);
  });

  it("the same answers from a 3.10 broker: a warning about consumers, no delivery limit", async () => {
    stubBroker(
      { ...overview405, rabbitmq_version: "3.10.8", management_version: "3.10.8", product_version: "3.10.8" },
      [],
    );
    const r = await inspectRabbit(context(), { minRetentionMs: 0 });
    expect(codes(r.findings)).toEqual(["rabbitmq.no_dead_letter_exchange queue orders (vhost /) dlq=null"]);
  });

  it("a management API that does not answer is unavailable:broker; an unknown vhost is forbidden:broker", async () => {
    vi.stubGlobal("fetch", async () => {
      throw new TypeError("fetch failed");
    });
    const down = await inspectRabbit(context(), { minRetentionMs: 0 }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(BrokerError);
    expect((down as BrokerError).code).toBe("unavailable:broker");
    stubBroker(overview405, []);
    const vhost = await inspectRabbit(context({ vhost: "nope" }), { minRetentionMs: 0 }).catch((e: unknown) => e);
    expect((vhost as BrokerError).code).toBe("forbidden:broker");
    expect((vhost as BrokerError).userMessage).toMatch(/vhost "nope"/);
  });
});
