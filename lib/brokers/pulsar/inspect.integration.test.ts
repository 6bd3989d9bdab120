/**
 * The sampler's look at Pulsar (inspectPulsar) against the real local broker (4.0.7): namespaces
 * and topics of the test's own, letters published through the WebSocket producer, the console's
 * subscription made as the adapter makes it, policies set through the admin API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrokerInspection, ConfigFinding } from "@/lib/brokers/contract/inspection";
import { PulsarAdmin, shortName, topicPath, type TopicName } from "@/lib/brokers/pulsar/client";
import { inspectPulsar } from "@/lib/brokers/pulsar/inspect";
import { PulsarKit, testEndpoint } from "@/lib/brokers/pulsar/test-kit";

const SUB = "dlq-console";
const opts = { minRetentionMs: 7 * 86_400_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kits: PulsarKit[] = [];
function newKit(): PulsarKit {
  const k = new PulsarKit();
  kits.push(k);
  return k;
}
afterAll(async () => {
  for (const k of kits) await k.cleanup();
});

const admin = new PulsarAdmin(testEndpoint());
const dlqOf = (t: TopicName) => ({ name: shortName(t), topic: t });
const look = (dlqs: TopicName[], a: PulsarAdmin = admin) =>
  inspectPulsar({ admin: a, subscription: SUB, dlqs: dlqs.map(dlqOf) }, opts);
const vitals = (r: BrokerInspection, t: TopicName) => r.dlqs.find((d) => d.name === shortName(t));
const finding = (r: BrokerInspection, code: string, object: string): ConfigFinding | undefined =>
  r.findings.find((f) => f.code === code && f.object === object);
const about = (r: BrokerInspection, t: TopicName) =>
  r.findings.filter((f) => f.dlq === shortName(t) || f.why.includes(shortName(t)));

/** Looks again until `ok` holds (topic policies reach the broker's cache a moment after they are set). */
async function until(dlqs: TopicName[], ok: (r: BrokerInspection) => boolean): Promise<BrokerInspection> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await look(dlqs);
    if (ok(r) || Date.now() > deadline) return r;
    await sleep(250);
  }
}

async function subscribe(k: PulsarKit, t: TopicName): Promise<void> {
  // MessageId (-1, -1, -1): from the earliest letter stored, as the adapter creates it.
  await k.admin.request("PUT", `persistent/${topicPath(t)}/subscription/${SUB}`, "create the console subscription", {
    body: { ledgerId: -1, entryId: -1, partitionIndex: -1 },
  });
}

const letters = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    body: new TextEncoder().encode(`letter ${i}`),
    properties: { REAL_TOPIC: "persistent://public/x/orders" },
  }));

describe("pulsar inspect: a namespace without retention", () => {
  const kit = newKit();
  let held: TopicName;
  let bare: TopicName;
  let gone: TopicName;
  let firstPublished: string;

  beforeAll(async () => {
    held = await kit.createTopic(kit.name("orders-billing-DLQ"));
    await kit.produce(held, letters(3));
    await subscribe(kit, held);
    bare = await kit.createTopic(kit.name("payments-billing-DLQ"));
    await kit.produce(bare, letters(1));
    gone = kit.topic(kit.name("never-created-DLQ"));
    const [first] = await kit.readAll(held);
    firstPublished = new Date(first.publishTime!).toISOString();
  });

  it("depth and the oldest letter come from the console's subscription; nothing expires them", async () => {
    const r = await look([held, bare, gone]);
    expect(vitals(r, held)).toEqual({
      name: shortName(held),
      queueType: "topic",
      depth: 3,
      inFlight: 0,
      enteredTotal: null,
      oldestAt: firstPublished,
      retentionMs: null,
      retentionClock: "arrival",
    });
    expect(r.findings.filter((f) => f.code === "pulsar.message_ttl" || f.code === "pulsar.backlog_eviction")).toEqual(
      [],
    );
  });

  it("a DLQ topic without the console's subscription: depth unknown, a critical finding with the command", async () => {
    const r = await look([held, bare]);
    expect(vitals(r, bare)).toMatchObject({ depth: null, inFlight: null, oldestAt: null });
    const f = finding(r, "pulsar.no_console_subscription", `topic ${shortName(bare)}`);
    expect(f).toMatchObject({ severity: "critical", dlq: shortName(bare) });
    expect(f?.fix).toContain(
      `pulsar-admin topics create-subscription -s ${SUB} -m earliest persistent://${shortName(bare)}`,
    );
    expect(finding(r, "pulsar.no_console_subscription", `topic ${shortName(held)}`)).toBeUndefined();
    // The namespace has no retention: one info finding for the namespace, not one per DLQ.
    expect(r.findings.filter((x) => x.code === "pulsar.no_retention")).toEqual([
      expect.objectContaining({ severity: "info", object: `namespace ${kit.ns}` }),
    ]);
  });

  it("a configured DLQ whose topic does not exist: every figure null, no finding, and the look goes on", async () => {
    const r = await look([held, gone]);
    expect(vitals(r, gone)).toEqual({
      name: shortName(gone),
      queueType: "topic",
      depth: null,
      inFlight: null,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock: "arrival",
    });
    expect(r.findings.filter((f) => f.dlq === shortName(gone))).toEqual([]);
    expect(vitals(r, held)?.depth).toBe(3);
  });

  it("calls: the namespace's policies once for two DLQs, then one stats and three applied policies per topic", async () => {
    const mine = new PulsarAdmin(testEndpoint());
    mine.calls = 5; // counted from where the admin is, not from zero
    const r = await look([held, bare], mine);
    expect(r.calls).toBe(3 + 2 * (1 + 3));
    expect(mine.calls).toBe(5 + r.calls);
    // A topic that does not exist costs its stats call only.
    expect((await look([held, bare, gone], mine)).calls).toBe(3 + 2 * (1 + 3) + 1);
  });

  it("a message TTL on the namespace is critical and is the DLQ's retention; a topic TTL of 0 overrides it", async () => {
    await kit.admin.request("POST", `namespaces/${kit.ns}/messageTTL`, "set a message TTL", { body: 120 });
    const r = await until([held, bare], (x) => !!finding(x, "pulsar.message_ttl", `namespace ${kit.ns}`));
    const f = finding(r, "pulsar.message_ttl", `namespace ${kit.ns}`);
    expect(f).toMatchObject({ severity: "critical" });
    expect(f?.why).toContain("2 minutes");
    expect(f?.fix).toContain(`pulsar-admin namespaces remove-message-ttl ${kit.ns}`);
    // Both DLQs of the namespace, in one finding.
    expect(f?.why).toContain(shortName(bare));
    expect(vitals(r, held)?.retentionMs).toBe(120_000);

    // The fix the finding offers for one topic alone: its own TTL of 0.
    await kit.admin.request(
      "POST",
      `persistent/${topicPath(held)}/messageTTL?messageTTL=0`,
      "switch the TTL off for one topic",
    );
    const after = await until([held, bare], (x) => vitals(x, held)?.retentionMs === null);
    expect(vitals(after, held)?.retentionMs).toBeNull();
    const still = finding(after, "pulsar.message_ttl", `namespace ${kit.ns}`);
    expect(still?.dlq).toBe(shortName(bare));
    expect(still?.why).not.toContain(shortName(held));
    // No subscription for a TTL to act on, and no retention: nothing says how long its letters stay.
    expect(vitals(after, bare)?.retentionMs).toBeNull();

    await kit.admin.request("DELETE", `namespaces/${kit.ns}/messageTTL`, "remove the message TTL");
    const cleared = await until([held, bare], (x) => !x.findings.some((y) => y.code === "pulsar.message_ttl"));
    expect(cleared.findings.map((y) => y.code)).not.toContain("pulsar.message_ttl");
  });
});

describe("pulsar inspect: a namespace with retention", () => {
  const kit = newKit();
  let held: TopicName;
  let bare: TopicName;

  beforeAll(async () => {
    await kit.ensureNamespace();
    await kit.admin.request("POST", `namespaces/${kit.ns}/retention`, "set retention", {
      body: { retentionTimeInMinutes: 7 * 24 * 60, retentionSizeInMB: 1024 },
    });
    held = await kit.createTopic(kit.name("orders-audit-DLQ"));
    await kit.produce(held, letters(2));
    await subscribe(kit, held);
    bare = await kit.createTopic(kit.name("orders-ship-DLQ"));
  });

  it("a DLQ with its subscription: no finding at all; one without: a warning that says how long retention keeps letters", async () => {
    const r = await look([held, bare]);
    expect(about(r, held)).toEqual([]);
    expect(r.findings.map((f) => f.code)).not.toContain("pulsar.no_retention");
    const f = finding(r, "pulsar.no_console_subscription", `topic ${shortName(bare)}`);
    expect(f).toMatchObject({ severity: "warning" });
    expect(f?.why).toContain("for 7 days and up to 1 GiB");
    expect(vitals(r, held)).toMatchObject({ depth: 2, retentionMs: null });
    // Without the console's subscription, retention is what keeps its letters, for its time.
    expect(vitals(r, bare)).toMatchObject({ depth: null, retentionMs: 7 * 86_400_000 });
  });

  it("a backlog quota that evicts is critical; its age limit is the DLQ's retention", async () => {
    await kit.admin.request(
      "POST",
      `namespaces/${kit.ns}/backlogQuota?backlogQuotaType=message_age`,
      "set a backlog quota",
      { body: { limitSize: -1, limitTime: 3600, policy: "consumer_backlog_eviction" } },
    );
    const r = await until([held], (x) => !!finding(x, "pulsar.backlog_eviction", `namespace ${kit.ns}`));
    const f = finding(r, "pulsar.backlog_eviction", `namespace ${kit.ns}`);
    expect(f).toMatchObject({ severity: "critical", dlq: shortName(held) });
    expect(f?.fix).toContain(`pulsar-admin namespaces remove-backlog-quota ${kit.ns} -t message_age`);
    expect(vitals(r, held)?.retentionMs).toBe(3_600_000);
  });
});

describe("pulsar inspect: failures", () => {
  it("a namespace that does not exist: its DLQs are missing, the look goes on", async () => {
    const kit = newKit();
    const t = await kit.createTopic(kit.name("ok-DLQ"));
    const nowhere = { tenant: "public", namespace: `no-such-ns-${Date.now()}`, topic: "x-DLQ" };
    const r = await look([t, nowhere]);
    expect(vitals(r, nowhere)).toMatchObject({ depth: null, oldestAt: null });
    expect(r.findings.filter((f) => f.object.includes(nowhere.namespace))).toEqual([]);
    expect(finding(r, "pulsar.no_console_subscription", `topic ${shortName(t)}`)).toBeDefined();
  });

  it("what Pulsar refuses to answer for one DLQ is an info finding, the others are looked at; a look where nothing answers fails", async () => {
    const kit = newKit();
    const t = await kit.createTopic(kit.name("fine-DLQ"));
    // parseTopicName takes it; Pulsar answers 412 "Namespace name is not valid" and "Topic name is not valid".
    const bad = { tenant: "public", namespace: "bad ns", topic: "x-DLQ" };
    const r = await look([t, bad]);
    expect(vitals(r, t)).toMatchObject({ depth: null });
    expect(vitals(r, bad)).toMatchObject({ depth: null, oldestAt: null, retentionMs: null });
    expect(finding(r, "pulsar.unreadable", "namespace public/bad ns")).toMatchObject({ severity: "info", dlq: null });
    const topicFinding = finding(r, "pulsar.unreadable", "topic public/bad ns/x-DLQ");
    expect(topicFinding).toMatchObject({ severity: "info", dlq: "public/bad ns/x-DLQ" });
    expect(topicFinding?.why).toContain("Topic name is not valid");
    expect(finding(r, "pulsar.no_console_subscription", `topic ${shortName(t)}`)).toBeDefined();

    await expect(look([bad])).rejects.toMatchObject({ kind: "bad_request" });
  });

  it("a broker that does not answer is unavailable:broker; an aborted look stops", async () => {
    const dead = new PulsarAdmin(testEndpoint({ adminUrl: "http://127.0.0.1:1", timeoutMs: 2000 }));
    const t = { tenant: "public", namespace: "default", topic: "x-DLQ" };
    await expect(inspectPulsar({ admin: dead, subscription: SUB, dlqs: [dlqOf(t)] }, opts)).rejects.toMatchObject({
      kind: "unreachable",
      code: "unavailable:broker",
    });
    await expect(
      inspectPulsar({ admin, subscription: SUB, dlqs: [dlqOf(t)] }, { ...opts, signal: AbortSignal.abort() }),
    ).rejects.toThrow(/abort/i);
  });
});
