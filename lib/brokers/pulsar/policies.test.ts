import { describe, expect, it } from "vitest";
import type { ConfigFinding } from "@/lib/brokers/contract/inspection";
import {
  backlogQuotaOf,
  mergeFindings,
  pulsarFindings,
  retentionKeeps,
  secondsWords,
  type DlqPolicyFacts,
  type PulsarPolicies,
} from "@/lib/brokers/pulsar/policies";
import { retentionMsOf, vitalsOf } from "@/lib/brokers/pulsar/inspect";

const topic = { tenant: "public", namespace: "orders", topic: "orders-billing-DLQ" };
const DLQ = "public/orders/orders-billing-DLQ";

/** A namespace's own answer: null where it sets nothing. */
const ns = (over: Partial<PulsarPolicies> = {}): PulsarPolicies => ({
  retentionMinutes: null,
  retentionSizeMb: null,
  messageTtlSeconds: null,
  backlogQuota: null,
  ...over,
});
/** An applied answer: every field set (Pulsar's broker defaults: no retention, no TTL, no quota). */
const applied = (over: Partial<PulsarPolicies> = {}): PulsarPolicies => ({
  retentionMinutes: 0,
  retentionSizeMb: 0,
  messageTtlSeconds: 0,
  backlogQuota: null,
  ...over,
});
const WEEK = { retentionMinutes: 7 * 24 * 60, retentionSizeMb: 10 * 1024 };

const facts = (over: Partial<DlqPolicyFacts> = {}): DlqPolicyFacts => ({
  topic,
  subscription: "dlq-console",
  subscribed: true,
  policies: ns(WEEK),
  applied: applied(WEEK),
  ...over,
});
const codes = (fs: ConfigFinding[]) => fs.map((f) => [f.code, f.severity, f.object]);
const byCode = (fs: ConfigFinding[], code: string) => fs.find((f) => f.code === `pulsar.${code}`);

describe("reading Pulsar's answers", () => {
  it("a backlogQuotaMap as Pulsar 4.0.7 answers it: -1 is no limit, an evicting quota is the one that counts", () => {
    expect(backlogQuotaOf({})).toBeNull();
    // The applied answer of a namespace without quotas (the broker's defaults).
    expect(
      backlogQuotaOf({
        destination_storage: { limit: -1, limitSize: -1, limitTime: -1, policy: "producer_request_hold" },
        message_age: { limit: -1, limitSize: -1, limitTime: -1, policy: "producer_request_hold" },
      }),
    ).toBeNull();
    const both = {
      destination_storage: { limit: 1048576, limitSize: 1048576, limitTime: -1, policy: "consumer_backlog_eviction" },
      message_age: { limit: -1, limitSize: -1, limitTime: 3600, policy: "producer_request_hold" },
    };
    expect(backlogQuotaOf(both)).toEqual({
      limitBytes: 1048576,
      limitSeconds: null,
      policy: "consumer_backlog_eviction",
    });
    expect(
      backlogQuotaOf({ ...both, destination_storage: { ...both.destination_storage, policy: "producer_exception" } }),
    ).toEqual({ limitBytes: 1048576, limitSeconds: 3600, policy: "producer_exception" });
    expect(
      backlogQuotaOf({ message_age: { limitSize: -1, limitTime: 600, policy: "consumer_backlog_eviction" } }),
    ).toEqual({ limitBytes: null, limitSeconds: 600, policy: "consumer_backlog_eviction" });
  });

  it("retention keeps letters only when neither its time nor its size is 0 (-1 is unlimited)", () => {
    expect(retentionKeeps(applied())).toBe(false);
    expect(retentionKeeps(applied({ retentionMinutes: 60, retentionSizeMb: 0 }))).toBe(false);
    expect(retentionKeeps(applied({ retentionMinutes: 0, retentionSizeMb: -1 }))).toBe(false);
    expect(retentionKeeps(applied({ retentionMinutes: -1, retentionSizeMb: -1 }))).toBe(true);
    expect(retentionKeeps(applied(WEEK))).toBe(true);
    expect(retentionKeeps(ns())).toBe(false);
  });

  it("says durations in words", () => {
    expect(secondsWords(120)).toBe("2 minutes");
    expect(secondsWords(86_400 * 7)).toBe("7 days");
    expect(secondsWords(3_600 + 1_800)).toBe("1 hour 30 minutes");
    expect(secondsWords(1)).toBe("1 second");
  });
});

describe("pulsarFindings", () => {
  it("a DLQ with the console's subscription and a week of retention, no TTL, no quota: nothing", () => {
    expect(pulsarFindings(facts())).toEqual([]);
  });

  it("no console subscription: critical without retention, with the command that creates it", () => {
    const fs = pulsarFindings(facts({ subscribed: false, policies: ns(), applied: applied() }));
    expect(codes(fs)).toEqual([
      ["pulsar.no_console_subscription", "critical", `topic ${DLQ}`],
      ["pulsar.no_retention", "info", "namespace public/orders"],
    ]);
    const f = byCode(fs, "no_console_subscription")!;
    expect(f.dlq).toBe(DLQ);
    expect(f.why).toContain('no subscription "dlq-console"');
    expect(f.why).toMatch(/no retention/);
    expect(f.fix).toContain(`pulsar-admin topics create-subscription -s dlq-console -m earliest persistent://${DLQ}`);
    expect(f.fix).toMatch(/console creates the subscription/);
    expect(
      pulsarFindings(facts({ subscribed: false, createSubscription: false, policies: ns(), applied: applied() }))[0]
        .fix,
    ).toMatch(/^createSubscription is off/);
  });

  it("no console subscription: a warning when retention keeps the letters, saying for how long", () => {
    const fs = pulsarFindings(facts({ subscribed: false }));
    expect(codes(fs)).toEqual([["pulsar.no_console_subscription", "warning", `topic ${DLQ}`]]);
    expect(fs[0].why).toContain("for 7 days and up to 10 GiB");
    const unlimited = pulsarFindings(
      facts({
        subscribed: false,
        applied: applied({ retentionMinutes: -1, retentionSizeMb: -1 }),
        policies: ns({ retentionMinutes: -1, retentionSizeMb: -1 }),
      }),
    );
    expect(unlimited[0]).toMatchObject({ severity: "warning" });
    expect(unlimited[0].why).toMatch(/Unlimited retention/);
  });

  it("no console subscription and policies that could not be read: critical (nothing says the letters are kept)", () => {
    const fs = pulsarFindings(facts({ subscribed: false, policies: null, applied: null }));
    expect(codes(fs)).toEqual([["pulsar.no_console_subscription", "critical", `topic ${DLQ}`]]);
    expect(fs[0].why).toMatch(/could not be read/);
  });

  it("no retention: info on the namespace, with the set-retention command; on the topic when the topic's own policy is the fault", () => {
    const fs = pulsarFindings(facts({ policies: ns(), applied: applied() }));
    expect(codes(fs)).toEqual([["pulsar.no_retention", "info", "namespace public/orders"]]);
    expect(fs[0].why).toContain('only the console\'s subscription "dlq-console" keeps the letters');
    expect(fs[0].fix).toContain("pulsar-admin namespaces set-retention public/orders --time 7d --size 10G");
    // The namespace keeps a week, the topic's own policy says 0: the topic is at fault.
    const override = pulsarFindings(facts({ policies: ns(WEEK), applied: applied() }));
    expect(codes(override)).toEqual([["pulsar.no_retention", "info", `topic ${DLQ}`]]);
    expect(override[0].fix).toContain(`pulsar-admin topicPolicies remove-retention persistent://${DLQ}`);
    // A topic with its own retention in a namespace without: nothing.
    expect(pulsarFindings(facts({ policies: ns(), applied: applied(WEEK) }))).toEqual([]);
  });

  it("a message TTL on the namespace is critical: it expires letters on the console's subscription", () => {
    const fs = pulsarFindings(
      facts({
        policies: ns({ ...WEEK, messageTtlSeconds: 120 }),
        applied: applied({ ...WEEK, messageTtlSeconds: 120 }),
        expired: 4,
      }),
    );
    expect(codes(fs)).toEqual([["pulsar.message_ttl", "critical", "namespace public/orders"]]);
    expect(fs[0].why).toContain("message TTL of 2 minutes");
    expect(fs[0].why).toContain('the console\'s "dlq-console" included');
    expect(fs[0].why).toContain("Retention then keeps them for 7 days");
    expect(fs[0].why).toContain("expired 4 letters");
    expect(fs[0].fix).toContain("pulsar-admin namespaces remove-message-ttl public/orders");
    expect(fs[0].fix).toContain(`pulsar-admin topicPolicies set-message-ttl persistent://${DLQ} -t 0`);
  });

  it("a TTL without retention: the letters are deleted, not only hidden", () => {
    const fs = pulsarFindings(
      facts({ policies: ns({ messageTtlSeconds: 60 }), applied: applied({ messageTtlSeconds: 60 }) }),
    );
    expect(codes(fs)).toEqual([
      ["pulsar.no_retention", "info", "namespace public/orders"],
      ["pulsar.message_ttl", "critical", "namespace public/orders"],
    ]);
    expect(byCode(fs, "message_ttl")!.why).toMatch(/deleted at the next trim/);
  });

  it("a topic TTL of 0 overrides the namespace's: no finding; a TTL the namespace does not set is the topic's or the broker's", () => {
    expect(
      pulsarFindings(
        facts({
          policies: ns({ ...WEEK, messageTtlSeconds: 120 }),
          applied: applied({ ...WEEK, messageTtlSeconds: 0 }),
        }),
      ),
    ).toEqual([]);
    const fromBroker = pulsarFindings(facts({ applied: applied({ ...WEEK, messageTtlSeconds: 3600 }) }));
    expect(codes(fromBroker)).toEqual([["pulsar.message_ttl", "critical", `topic ${DLQ}`]]);
    expect(fromBroker[0].why).toMatch(/ttlDurationDefaultInSeconds/);
    expect(fromBroker[0].fix).toContain(`pulsar-admin topicPolicies set-message-ttl persistent://${DLQ} -t 0`);
    // Only the namespace's answers (applied not read): its TTL counts.
    expect(
      codes(pulsarFindings(facts({ policies: ns({ ...WEEK, messageTtlSeconds: 30 }), applied: undefined }))),
    ).toEqual([["pulsar.message_ttl", "critical", "namespace public/orders"]]);
  });

  it("a backlog quota that evicts is critical; one that holds the producer is not a finding", () => {
    const evict = { limitBytes: 1048576, limitSeconds: null, policy: "consumer_backlog_eviction" };
    const fs = pulsarFindings(
      facts({ policies: ns({ ...WEEK, backlogQuota: evict }), applied: applied({ ...WEEK, backlogQuota: evict }) }),
    );
    expect(codes(fs)).toEqual([["pulsar.backlog_eviction", "critical", "namespace public/orders"]]);
    expect(fs[0].why).toContain("1 MiB of backlog");
    expect(fs[0].why).toContain('the console\'s subscription "dlq-console"');
    expect(fs[0].fix).toContain("pulsar-admin namespaces remove-backlog-quota public/orders -t destination_storage");
    expect(fs[0].fix).toContain(
      "pulsar-admin namespaces set-backlog-quota public/orders -t destination_storage -l 1048576 -p producer_request_hold",
    );
    const hold = { ...evict, policy: "producer_request_hold" };
    expect(
      pulsarFindings(
        facts({ policies: ns({ ...WEEK, backlogQuota: hold }), applied: applied({ ...WEEK, backlogQuota: hold }) }),
      ),
    ).toEqual([]);
    const byAge = { limitBytes: null, limitSeconds: 600, policy: "consumer_backlog_eviction" };
    const topicOnly = pulsarFindings(facts({ applied: applied({ ...WEEK, backlogQuota: byAge }) }));
    expect(codes(topicOnly)).toEqual([["pulsar.backlog_eviction", "critical", `topic ${DLQ}`]]);
    expect(topicOnly[0].why).toContain("letters older than 10 minutes");
    expect(topicOnly[0].fix).toContain(
      `pulsar-admin topicPolicies set-backlog-quota persistent://${DLQ} -t message_age -lt 600 -p producer_request_hold`,
    );
  });

  it("mergeFindings: a namespace's fault seen from two DLQs is one finding naming both", () => {
    const a = pulsarFindings(
      facts({ policies: ns({ ...WEEK, messageTtlSeconds: 60 }), applied: applied({ ...WEEK, messageTtlSeconds: 60 }) }),
    );
    const other = { ...topic, topic: "payments-x-DLQ" };
    const b = pulsarFindings(
      facts({
        topic: other,
        subscribed: false,
        policies: ns({ ...WEEK, messageTtlSeconds: 60 }),
        applied: applied({ ...WEEK, messageTtlSeconds: 60 }),
      }),
    );
    const merged = mergeFindings([...a, ...b]);
    expect(codes(merged)).toEqual([
      ["pulsar.message_ttl", "critical", "namespace public/orders"],
      ["pulsar.no_console_subscription", "warning", "topic public/orders/payments-x-DLQ"],
    ]);
    expect(merged[0].dlq).toBe(DLQ);
    expect(merged[0].why).toMatch(/The same holds for dead-letter topic public\/orders\/payments-x-DLQ\.$/);
  });
});

describe("vitals", () => {
  type Sub = { msgBacklog?: number; unackedMessages?: number; earliestMsgPublishTimeInBacklog?: number };
  const stats = (sub?: Sub): Parameters<typeof vitalsOf>[1] => ({
    subscriptions: { other: { msgBacklog: 99 }, ...(sub ? { "dlq-console": sub } : {}) },
  });

  it("depth and oldest letter are the console subscription's; TTL is the retention, counted from arrival", () => {
    const at = Date.UTC(2026, 11, 2, 17, 0, 0);
    expect(
      vitalsOf(
        DLQ,
        stats({ msgBacklog: 3, unackedMessages: 1, earliestMsgPublishTimeInBacklog: at }),
        "dlq-console",
        applied({ messageTtlSeconds: 120 }),
      ),
    ).toEqual({
      name: DLQ,
      queueType: "topic",
      depth: 3,
      inFlight: 1,
      enteredTotal: null,
      oldestAt: new Date(at).toISOString(),
      retentionMs: 120_000,
      retentionClock: "arrival",
    });
    // An empty backlog says 0 for its oldest letter.
    expect(
      vitalsOf(
        DLQ,
        stats({ msgBacklog: 0, unackedMessages: 0, earliestMsgPublishTimeInBacklog: 0 }),
        "dlq-console",
        applied(),
      ),
    ).toMatchObject({ depth: 0, oldestAt: null, retentionMs: null });
  });

  it("without the console's subscription the depth is unknown (another subscription's backlog is not the DLQ's)", () => {
    expect(vitalsOf(DLQ, stats(), "dlq-console", applied({ messageTtlSeconds: 60 }))).toMatchObject({
      depth: null,
      inFlight: null,
      oldestAt: null,
      retentionMs: null,
    });
    // Then retention alone keeps its letters (a TTL acts on subscriptions only).
    expect(vitalsOf(DLQ, stats(), "dlq-console", applied({ ...WEEK, messageTtlSeconds: 60 })).retentionMs).toBe(
      7 * 86_400_000,
    );
    expect(
      vitalsOf(DLQ, stats(), "dlq-console", applied({ retentionMinutes: -1, retentionSizeMb: -1 })).retentionMs,
    ).toBeNull();
  });

  it("a topic that does not exist: every figure null", () => {
    expect(vitalsOf(DLQ, null, "dlq-console", applied({ messageTtlSeconds: 60 }))).toEqual({
      name: DLQ,
      queueType: "topic",
      depth: null,
      inFlight: null,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock: "arrival",
    });
  });

  it("retention: the shorter of the TTL and an evicting age quota; a holding quota or a size quota is no deadline", () => {
    expect(
      retentionMsOf(
        applied({
          messageTtlSeconds: 600,
          backlogQuota: { limitBytes: null, limitSeconds: 300, policy: "consumer_backlog_eviction" },
        }),
      ),
    ).toBe(300_000);
    expect(
      retentionMsOf(
        applied({ backlogQuota: { limitBytes: null, limitSeconds: 300, policy: "producer_request_hold" } }),
      ),
    ).toBeNull();
    expect(
      retentionMsOf(
        applied({ backlogQuota: { limitBytes: 1024, limitSeconds: null, policy: "consumer_backlog_eviction" } }),
      ),
    ).toBeNull();
    expect(retentionMsOf(ns())).toBeNull();
    expect(retentionMsOf(null)).toBeNull();
  });
});
