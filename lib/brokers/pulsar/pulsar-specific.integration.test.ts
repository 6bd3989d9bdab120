// Pulsar behaviour beyond the shared contracts, on the real local broker (scripts/services.sh):
// what a real dead letter carries, reads that take nothing, discovery and the console's own
// subscription, redrives whose target refuses, what a redrive keeps, a letter acknowledged by
// someone else during a move, and a broker that is down.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { MoveRequest, RedriveTarget } from "@/lib/brokers/contract/move";
import { displayText } from "@/lib/brokers/display";
import { collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { PulsarAdapter } from "@/lib/brokers/pulsar/adapter";
import { PulsarSocket, shortName, topicPath, type TopicName } from "@/lib/brokers/pulsar/client";
import {
  AckState,
  decodeMessageId,
  encodeMessageId,
  messageIdText,
  parseAckedRanges,
  parsePosition,
} from "@/lib/brokers/pulsar/message-id";
import { PulsarKit, testConfig, type KitLetter } from "@/lib/brokers/pulsar/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const CONSOLE_SUB = "dlq-console";
const APP_SUB = "sub";
const text = (s: string) => new TextEncoder().encode(s);
const bodyText = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const prop = (l: Letter, name: string) => displayText(l.properties.find((p) => p.name === name)?.value);
const header = (l: Letter, name: string) => displayText(l.headers.find((h) => h.name === name)?.value);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errorOf = async (p: Promise<unknown>) =>
  (await p.then(
    () => null,
    (e: unknown) => e,
  )) as BrokerError | null;

interface SubStats {
  msgBacklog?: number;
}
interface Stats {
  subscriptions?: Record<string, SubStats>;
  msgInCounter?: number;
}
interface InternalStats {
  cursors?: Record<string, { markDeletePosition?: string; individuallyDeletedMessages?: string }>;
}

const stats = (kit: PulsarKit, t: TopicName) =>
  kit.admin.get<Stats>(`persistent/${topicPath(t)}/stats`, "read test stats", { notFound: "null" });
const internalStats = (kit: PulsarKit, t: TopicName) =>
  kit.admin.get<InternalStats>(`persistent/${topicPath(t)}/internalStats`, "read test internal stats");
const backlog = async (kit: PulsarKit, t: TopicName, sub: string) =>
  (await stats(kit, t))?.subscriptions?.[sub]?.msgBacklog;

/** A fresh source topic and `<source>-sub-DLQ`, filled by a real consumer's dead-letter policy. */
async function deadLettered(
  kit: PulsarKit,
  letters: KitLetter[],
  prefix = "orders",
): Promise<{ source: TopicName; dlq: TopicName; name: string }> {
  const source = await kit.createTopic(kit.name(prefix));
  const dlq = kit.topic(`${source.topic}-${APP_SUB}-DLQ`);
  await kit.deadLetter(source, dlq, APP_SUB, letters);
  return { source, dlq, name: shortName(dlq) };
}

const request = (l: Letter, target: RedriveTarget, job = randomUUID()): MoveRequest => ({
  letterId: l.id,
  sha256: l.sha256,
  target,
  markers: markersFor(job),
});

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > end) return v;
    await sleep(100);
  }
}

describe("Pulsar adapter on the real broker", () => {
  const kit = new PulsarKit();
  const adapter = new PulsarAdapter(testConfig({ namespaces: [kit.ns] }), { allManagedHeaders: MANAGED_HEADERS });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  it("reads a real dead letter: REAL_TOPIC as the origin, subscription, origin message id, key, event time, properties", async () => {
    const { source, name } = await deadLettered(kit, [
      {
        body: text(`{"order":1}`),
        properties: { "exception-class": "com.acme.OrderRejected", tenant: "acme" },
        key: "order-1",
        eventTime: "2026-01-02T03:04:05.678Z",
      },
    ]);
    const [l] = await browseAll(adapter, name);
    expect(l).toBeDefined();
    expect(bodyText(l.body)).toBe(`{"order":1}`);
    expect(l.failure).toMatchObject({
      originQueue: shortName(source),
      reason: "maxRedeliverCount",
      exceptionClass: "com.acme.OrderRejected",
      count: null,
    });
    expect(l.orderingKey).toBe("order-1");
    expect(prop(l, "key")).toBe("order-1");
    expect(l.properties.find((p) => p.name === "event time")?.value).toEqual({
      t: "timestamp",
      v: "2026-01-02T03:04:05.678Z",
    });
    expect(l.properties.find((p) => p.name === "publish time")?.value.t).toBe("timestamp");
    expect(prop(l, "origin subscription")).toBe(APP_SUB);
    expect(header(l, "REAL_TOPIC")).toBe(`persistent://${shortName(source)}`);
    expect(header(l, "REAL_SUBSCRIPTION")).toBe(APP_SUB);
    expect(header(l, "tenant")).toBe("acme");
    expect(header(l, "exception-class")).toBe("com.acme.OrderRejected");
    // ORIGIN_MESSAGE_ID names the message as it was stored in the source topic.
    const [original] = await kit.readAll(source);
    const originId = messageIdText(decodeMessageId(original.messageId));
    expect(header(l, "ORIGIN_MESSAGE_ID")).toBe(originId);
    expect(prop(l, "origin message id")).toBe(originId);
    expect(l.history).toHaveLength(1);
    expect(l.history[0]).toMatchObject({ queue: shortName(source), reason: "maxRedeliverCount" });
    // The letter's id is its position in the DLQ topic, stable across reads.
    expect(l.messageId).toMatch(/^\d+:\d+:-1$/);
    expect(l.id).toBe(l.messageId!.split(":").slice(0, 2).join("-"));
    expect((await adapter.getLetter(name, l.id))?.sha256).toBe(l.sha256);
  });

  it("reads without taking: browse twice and a stream leave the console's and the application's cursors as they were", async () => {
    const { source, dlq, name } = await deadLettered(
      kit,
      [0, 1, 2, 3].map((i) => ({ body: text(`keep-${i}`) })),
    );
    const first = await browseAll(adapter, name); // creates the console's subscription
    expect(first.map((l) => bodyText(l.body))).toEqual(["keep-0", "keep-1", "keep-2", "keep-3"]);
    const cursorBefore = (await internalStats(kit, dlq))!.cursors![CONSOLE_SUB];
    const appBefore = (await internalStats(kit, source))!.cursors![APP_SUB];
    expect(await backlog(kit, dlq, CONSOLE_SUB)).toBe(4);
    const appBacklog = await backlog(kit, source, APP_SUB);

    const again = await browseAll(adapter, name);
    const page = await adapter.browse(name, { offset: 1, limit: 2 });
    const streamed: Letter[] = [];
    for await (const l of adapter.stream(name)) streamed.push(l);

    expect(again.map((l) => l.id)).toEqual(first.map((l) => l.id));
    expect(page.letters.map((l) => l.id)).toEqual(first.slice(1, 3).map((l) => l.id));
    expect(page.hasMore).toBe(true);
    expect(page.depth).toBe(4);
    expect(streamed.map((l) => l.id)).toEqual(first.map((l) => l.id));
    expect(await backlog(kit, dlq, CONSOLE_SUB)).toBe(4);
    expect((await internalStats(kit, dlq))!.cursors![CONSOLE_SUB]).toMatchObject({
      markDeletePosition: cursorBefore.markDeletePosition,
      individuallyDeletedMessages: cursorBefore.individuallyDeletedMessages,
    });
    expect((await internalStats(kit, source))!.cursors![APP_SUB]).toMatchObject({
      markDeletePosition: appBefore.markDeletePosition,
      individuallyDeletedMessages: appBefore.individuallyDeletedMessages,
    });
    expect(await backlog(kit, source, APP_SUB)).toBe(appBacklog);
    // The readers' own cursors went away with them: only the console's subscription is left on the DLQ.
    expect(Object.keys((await stats(kit, dlq))!.subscriptions ?? {})).toEqual([CONSOLE_SUB]);
  });

  it("redrive to a terminated topic: every letter fails and stays in the DLQ with its id, nothing arrives", async () => {
    const { dlq, name } = await deadLettered(
      kit,
      [0, 1, 2].map((i) => ({ body: text(`terminated-${i}`) })),
    );
    const target = await kit.createTopic(kit.name("closed"));
    await kit.terminate(target);
    const before = await browseAll(adapter, name);
    expect(before).toHaveLength(3);

    const results = await collectMoves(
      adapter.moveLetters(
        name,
        before.map((l) => request(l, { kind: "queue", name: shortName(target) })),
      ),
    );
    expect(results.map((r) => r.letterId)).toEqual(before.map((l) => l.id));
    for (const r of results) {
      expect(r.outcome, JSON.stringify(r)).toBe("failed");
      expect(r.destination).toBe(`topic ${shortName(target)}`);
      expect(r.reason).toMatch(/stays in the DLQ/);
    }
    await sleep(500);
    expect((await browseAll(adapter, name)).map((l) => l.id)).toEqual(before.map((l) => l.id));
    expect(await backlog(kit, dlq, CONSOLE_SUB)).toBe(3);
    expect((await stats(kit, target))?.msgInCounter ?? 0).toBe(0);
    expect(await kit.entries(target)).toBe(0);
  });

  it("redrive to a terminated topic says that the topic was terminated, not that Pulsar is busy", async () => {
    // Pulsar refuses the producer's WebSocket handshake with HTTP 503 and TopicTerminatedException
    // in the page's title: a lasting refusal, which "busy, retry in a moment" would misname.
    const { name } = await deadLettered(kit, [{ body: text("terminated-reason") }]);
    const target = await kit.createTopic(kit.name("closed"));
    await kit.terminate(target);
    const [l] = await browseAll(adapter, name);
    const [r] = await collectMoves(adapter.moveLetters(name, [request(l, { kind: "queue", name: shortName(target) })]));
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(/terminated/i);
    expect(r.reason).not.toMatch(/busy|retry in a moment/i);
  });

  it("redrive to a topic that does not exist: 'does not exist', the letters stay, the topic is not created by the attempt", async () => {
    const { name } = await deadLettered(
      kit,
      [0, 1].map((i) => ({ body: text(`nowhere-${i}`) })),
    );
    const missing = kit.topic(`never-created-${randomUUID().slice(0, 8)}`);
    const before = await browseAll(adapter, name);
    const results = await collectMoves(
      adapter.moveLetters(
        name,
        before.map((l) => request(l, { kind: "queue", name: shortName(missing) })),
      ),
    );
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.outcome).toBe("failed");
      expect(r.reason).toMatch(/does not exist/);
    }
    expect(await stats(kit, missing)).toBeNull(); // 404: not auto-created
    expect(
      (await kit.admin.get<string[]>(`persistent/${kit.tenant}/${kit.namespace}`, "list topics")) ?? [],
    ).not.toContain(`persistent://${shortName(missing)}`);
    expect((await browseAll(adapter, name)).map((l) => l.id)).toEqual(before.map((l) => l.id));
  });

  it("many copies in flight: a key whose letter failed is held back in DLQ order, the other keys move in order, and only moved letters leave", async () => {
    const keys = ["a", "b", "a", "c", "b", "a", "c"];
    const { source, dlq, name } = await deadLettered(
      kit,
      keys.map((k, i) => ({ body: text(`w-${i}`), key: k })),
    );
    const before = await browseAll(adapter, name);
    const job = randomUUID();
    // The first letter of key "a" fails (its bytes "changed since the scan"): every later "a" must stay behind it.
    const reqs = before.map((l, i) => ({
      ...request(l, { kind: "origin" }, job),
      ...(i === 0 ? { sha256: "0".repeat(64) } : {}),
    }));
    const results = await collectMoves(adapter.moveLetters(name, reqs, { maxInFlight: 32 }));
    expect(results.map((r) => r.letterId)).toEqual(before.map((l) => l.id));
    expect(results.map((r) => r.outcome)).toEqual([
      "checksum_mismatch",
      "moved",
      "failed",
      "moved",
      "moved",
      "failed",
      "moved",
    ]);
    for (const i of [2, 5]) expect(results[i].reason).toMatch(/Held back/);
    const arrived = (await kit.readAll(source)).filter((m) => m.properties?.["x-dlq-redrive-id"] === job);
    expect(arrived.map((m) => Buffer.from(m.payload, "base64").toString())).toEqual(["w-1", "w-3", "w-4", "w-6"]);
    const left = await until(
      async () => (await browseAll(adapter, name)).map((l) => bodyText(l.body)),
      (ls) => ls.length === 3,
    );
    expect(left).toEqual(["w-0", "w-2", "w-5"]);
    expect(await backlog(kit, dlq, CONSOLE_SUB)).toBe(3);
  });

  it("redrive to the origin keeps the key, event time and properties, sets the markers, and takes the letter off the DLQ", async () => {
    const { source, dlq, name } = await deadLettered(kit, [
      { body: text("again-0"), key: "k-0", properties: { app: "a0" } },
      {
        body: text("again-1"),
        key: "k-1",
        eventTime: "2026-03-04T05:06:07.089Z",
        properties: { app: "a1", "trace-id": "t-1" },
      },
      { body: text("again-2"), key: "k-2" },
    ]);
    const before = await browseAll(adapter, name);
    expect(before).toHaveLength(3);
    const chosen = before[1];
    const job = randomUUID();
    const req = request(chosen, { kind: "origin" }, job);
    const results = await collectMoves(adapter.moveLetters(name, [req]));
    expect(results).toEqual([
      {
        letterId: chosen.id,
        outcome: "moved",
        destination: `topic ${shortName(source)}`,
        target: shortName(source),
        reason: null,
        orderingKey: "k-1",
      },
    ]);

    // Gone from the DLQ once the call returned (acknowledgements are flushed as the consumer closes).
    const depth = await until(
      () => backlog(kit, dlq, CONSOLE_SUB),
      (d) => d === 2,
    );
    expect(depth).toBe(2);
    expect((await adapter.describeDlq(name)).depth).toBe(2);
    expect((await browseAll(adapter, name)).map((l) => l.id)).toEqual([before[0].id, before[2].id]);

    const arrived = (await kit.readAll(source)).filter(
      (f) => f.properties?.[REDRIVE_HEADERS.replayId] === req.markers.replayId,
    );
    expect(arrived).toHaveLength(1);
    const copy = arrived[0];
    expect(Buffer.from(copy.payload, "base64").toString()).toBe("again-1");
    expect(copy.key).toBe("k-1");
    expect(copy.eventTime && new Date(copy.eventTime).toISOString()).toBe("2026-03-04T05:06:07.089Z");
    expect(copy.properties).toMatchObject({
      app: "a1",
      "trace-id": "t-1",
      REAL_TOPIC: `persistent://${shortName(source)}`,
      REAL_SUBSCRIPTION: APP_SUB,
      ORIGIN_MESSAGE_ID: header(chosen, "ORIGIN_MESSAGE_ID"),
      [REDRIVE_HEADERS.redriveId]: job,
      [REDRIVE_HEADERS.redriveCount]: "1",
      [REDRIVE_HEADERS.originalMessageId]: chosen.messageId,
    });
  });

  /** Someone else acknowledges a letter on the console's own subscription; resolves once its cursor shows it. */
  async function ackElsewhere(dlq: TopicName, l: Letter): Promise<void> {
    const [ledger, entry] = l.messageId!.split(":").map(BigInt);
    const socket = await PulsarSocket.open(
      kit.ep,
      `consumer/persistent/${topicPath(dlq)}/${CONSOLE_SUB}?subscriptionType=Shared&pullMode=true`,
      "acknowledge a letter elsewhere",
    );
    socket.send({ messageId: encodeMessageId({ ledger, entry }) });
    await socket.close();
    const acked = await until(
      async () => {
        const c = (await internalStats(kit, dlq))!.cursors![CONSOLE_SUB];
        return new AckState(
          parsePosition(c.markDeletePosition) ?? { ledger: -1n, entry: -1n },
          parseAckedRanges(c.individuallyDeletedMessages),
        ).isAcked({ ledger, entry });
      },
      (done) => done,
    );
    expect(acked, "the other acknowledgement shows on the cursor").toBe(true);
  }

  it("a letter acknowledged by someone else on the console's subscription during the move is missing where it was, and not copied", async () => {
    const { dlq, name } = await deadLettered(
      kit,
      [0, 1, 2].map((i) => ({ body: text(`elsewhere-${i}`) })),
    );
    const target = await kit.createTopic(kit.name("target"));
    const before = await browseAll(adapter, name);
    const job = randomUUID();
    let once = false;
    const results = await collectMoves(
      adapter.moveLetters(
        name,
        before.map((l) => request(l, { kind: "queue", name: shortName(target) }, job)),
        {
          maxInFlight: 1,
          beforeRemove: async () => {
            if (once) return;
            once = true;
            await ackElsewhere(dlq, before[2]);
          },
        },
      ),
    );
    expect(results.map((r) => [r.letterId, r.outcome])).toEqual([
      [before[0].id, "moved"],
      [before[1].id, "moved"],
      [before[2].id, "missing"],
    ]);
    expect(results[2].reason).toMatch(new RegExp(`^Not found in DLQ "${name}" when the console looked through it`));
    expect(results.map((r) => r.target)).toEqual([shortName(target), shortName(target), null]);
    const arrived = (await kit.readAll(target)).filter((m) => m.properties?.[REDRIVE_HEADERS.redriveId] === job);
    expect(arrived.map((m) => Buffer.from(m.payload, "base64").toString())).toEqual(["elsewhere-0", "elsewhere-1"]);
    expect(
      await until(
        () => backlog(kit, dlq, CONSOLE_SUB),
        (d) => d === 0,
      ),
    ).toBe(0);
  });

  /**
   * Pulsar's own dead-lettering publishes without batching; an application that republishes
   * failures itself (batching is a Java producer's default) writes several letters into one entry.
   */
  async function batchedDlq(n: number): Promise<{ dlq: TopicName; name: string; target: TopicName }> {
    const dlq = await kit.createTopic(`${kit.name("batched")}-${APP_SUB}-DLQ`);
    const target = await kit.createTopic(kit.name("target"));
    const p = await PulsarSocket.open(
      kit.ep,
      `producer/persistent/${topicPath(dlq)}?batchingEnabled=true&batchingMaxMessages=${n}&batchingMaxPublishDelay=2000`,
      "publish a batch",
    );
    try {
      for (let i = 0; i < n; i++)
        p.send({ payload: Buffer.from(`batched-${i}`).toString("base64"), context: String(i) });
      for (let i = 0; i < n; i++) expect((await p.next())?.result).toBe("ok");
    } finally {
      await p.close();
    }
    expect(await kit.entries(dlq)).toBe(1); // one entry holds them all
    return { dlq, name: shortName(dlq), target };
  }

  it("a batched DLQ: each letter of the entry is a letter of its own; the depth is Pulsar's, in entries, and says so", async () => {
    const { name } = await batchedDlq(3);
    const letters = await browseAll(adapter, name);
    expect(letters.map((l) => bodyText(l.body))).toEqual(["batched-0", "batched-1", "batched-2"]);
    expect(new Set(letters.map((l) => l.id)).size).toBe(3);
    expect(letters.map((l) => l.messageId)).toEqual(
      letters.map((_, i) => expect.stringMatching(new RegExp(`^\\d+:\\d+:-1:${i}$`))),
    );
    // Pulsar's msgBacklog counts entries (1 here) and nothing it answers counts the letters in them
    // short of reading them all: the depth is the entry count, and the DLQ's facts say it is.
    const d = await adapter.describeDlq(name);
    expect(d.depth).toBe(1);
    expect(d.facts.find((f) => f.name === "console subscription")?.value).toMatchObject({
      v: expect.stringMatching(/backlog 1 entr/),
    });
  });

  it("a batched DLQ: moving every letter of an entry empties it", async () => {
    const { name, target } = await batchedDlq(3);
    const letters = await browseAll(adapter, name);
    const moved = await collectMoves(
      adapter.moveLetters(
        name,
        letters.map((l) => request(l, { kind: "queue", name: shortName(target) })),
      ),
    );
    expect(moved.map((r) => r.outcome)).toEqual(["moved", "moved", "moved"]);
    expect(await kit.entries(target)).toBe(3);
    const left = await until(
      async () => (await browseAll(adapter, name)).length,
      (n) => n === 0,
    );
    expect(left, "letters reported moved are still in the DLQ: the next redrive copies them again").toBe(0);
  });

  it("a batched DLQ: one letter of an entry is either moved and gone, or failed and not copied; the others stay", async () => {
    const { name, target } = await batchedDlq(3);
    const before = await browseAll(adapter, name);
    const [r] = await collectMoves(
      adapter.moveLetters(name, [request(before[1], { kind: "queue", name: shortName(target) })]),
    );
    if (r.outcome === "moved") {
      expect(await kit.entries(target)).toBe(1);
      const rest = await until(
        async () => (await browseAll(adapter, name)).map((l) => bodyText(l.body)),
        (ls) => ls.length === 2,
      );
      expect(rest, "the letter reported moved is still in the DLQ").toEqual(["batched-0", "batched-2"]);
    } else {
      expect(r.outcome).toBe("failed");
      expect(r.reason).toMatch(/\S/);
      expect(await kit.entries(target)).toBe(0);
      expect((await browseAll(adapter, name)).map((l) => l.id)).toEqual(before.map((l) => l.id));
    }
  });
});

describe("Pulsar discovery and the console's subscription", () => {
  const kit = new PulsarKit();
  const other = new PulsarKit();
  const configured = () => `${kit.ns}/my-dead-letters`;
  const gone = () => `${kit.ns}/configured-but-gone`;
  let adapter: PulsarAdapter;
  afterAll(async () => {
    await adapter?.close();
    await kit.cleanup();
    await other.cleanup();
  });

  it("lists the namespace's -DLQ topics and the configured ones, not other topics; creates its subscription at the earliest letter", async () => {
    await kit.ensureNamespace();
    adapter = new PulsarAdapter(
      testConfig({ namespaces: [kit.ns], dlqs: [{ name: configured() }, { name: gone() }] }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    const { source, dlq, name } = await deadLettered(
      kit,
      [0, 1, 2].map((i) => ({ body: text(`early-${i}`) })),
    );
    // Dead-lettered before the console's subscription existed.
    expect((await stats(kit, dlq))!.subscriptions?.[CONSOLE_SUB]).toBeUndefined();
    await kit.createTopic("audit-DLQ-archive");
    await kit.createTopic("orders-DLQ-replay");
    await kit.createTopic("DLQ-orders");
    // Topic names are case-sensitive: a live "…-dlq" topic is not the client's "-DLQ" (listing would subscribe it).
    await kit.createTopic("live-orders-dlq");
    const mine = await kit.createTopic("my-dead-letters");
    await kit.produce(mine, [{ body: text("configured-0") }]);
    const elsewhere = await other.createTopic("foreign-sub-DLQ");

    const list = await adapter.listDlqs();
    const by = new Map(list.map((d) => [d.name, d]));
    expect([...by.keys()].sort()).toEqual([name, configured(), gone()].sort());
    expect(by.has(shortName(source))).toBe(false);
    expect(by.has(shortName(elsewhere))).toBe(false);
    expect(by.get(name)).toMatchObject({ source: "discovered", kind: "pulsar", queueType: "topic", depth: 3 });
    expect(by.get(configured())).toMatchObject({ source: "config", depth: 1 });
    expect(by.get(gone())).toMatchObject({ source: "config", depth: null });
    expect(by.get(gone())!.warnings.map((w) => w.code)).toContain("missing");
    expect(by.get(name)!.warnings.map((w) => w.code)).not.toContain("missing");

    // Listing made the console's subscription, from the earliest stored letter.
    expect(await backlog(kit, dlq, CONSOLE_SUB)).toBe(3);
    expect((await browseAll(adapter, name)).map((l) => bodyText(l.body))).toEqual(["early-0", "early-1", "early-2"]);
    const described = await adapter.describeDlq(name);
    expect(described.depth).toBe(3);
    // The origin from the oldest letter's REAL_TOPIC (a peek: nothing acknowledged).
    expect(described.origins).toEqual([shortName(source)]);
    expect(await backlog(kit, dlq, CONSOLE_SUB)).toBe(3);

    const e = await errorOf(adapter.describeDlq(gone()));
    expect(e).toBeInstanceOf(BrokerError);
    expect(e!.kind).toBe("not_found");
    expect(e!.userMessage).toContain(gone());
  });

  it("a live topic that is not a DLQ is refused (not_found) and gets no subscription: the console's would keep every message it ever gets", async () => {
    await kit.ensureNamespace();
    const reader = new PulsarAdapter(testConfig({ namespaces: [kit.ns] }), { allManagedHeaders: MANAGED_HEADERS });
    const live = await kit.createTopic(kit.name("live-orders"));
    await kit.produce(live, [{ body: text("a live order") }]);
    for (const p of [reader.describeDlq(shortName(live)), reader.browse(shortName(live), { offset: 0, limit: 10 })]) {
      const e = await errorOf(p);
      expect(e).toBeInstanceOf(BrokerError);
      expect(e!.kind).toBe("not_found");
      expect(e!.userMessage).toMatch(/is not a DLQ of connection/);
    }
    expect(Object.keys((await stats(kit, live))!.subscriptions ?? {})).toEqual([]);
    await reader.close();
  });

  it("with createSubscription off: no subscription is made, depth is unknown, a move fails clearly and the letters stay", async () => {
    const own = new PulsarKit();
    const cautious = new PulsarAdapter(
      testConfig({ id: "cautious-pulsar", namespaces: [own.ns], createSubscription: false }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    try {
      const { dlq, name } = await deadLettered(
        own,
        [0, 1].map((i) => ({ body: text(`unsubscribed-${i}`) })),
      );
      const [summary] = await cautious.listDlqs();
      expect(summary).toMatchObject({ name, depth: null });
      const letters = await browseAll(cautious, name);
      expect(letters.map((l) => bodyText(l.body))).toEqual(["unsubscribed-0", "unsubscribed-1"]);
      expect((await stats(own, dlq))!.subscriptions?.[CONSOLE_SUB]).toBeUndefined();

      const target = await own.createTopic(own.name("target"));
      const e = await errorOf(
        collectMoves(
          cautious.moveLetters(
            name,
            letters.map((l) => request(l, { kind: "queue", name: shortName(target) })),
          ),
        ),
      );
      expect(e).toBeInstanceOf(BrokerError);
      expect(e!.userMessage).toMatch(/createSubscription/);
      expect(e!.userMessage).toContain(CONSOLE_SUB);
      expect((await stats(own, dlq))!.subscriptions?.[CONSOLE_SUB]).toBeUndefined();
      expect(await own.entries(target)).toBe(0);
      expect((await own.readAll(dlq)).map((f) => Buffer.from(f.payload, "base64").toString())).toEqual([
        "unsubscribed-0",
        "unsubscribed-1",
      ]);
    } finally {
      await cautious.close();
      await own.cleanup();
    }
  });

  it("a broker that does not answer: listDlqs rejects as unreachable", async () => {
    const dead = new PulsarAdapter(
      testConfig({ id: "dead-pulsar", adminUrl: "http://127.0.0.1:1", timeoutSeconds: 2, namespaces: [kit.ns] }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    const e = await errorOf(dead.listDlqs());
    expect(e).toBeInstanceOf(BrokerError);
    expect(e!.kind).toBe("unreachable");
    expect(e!.userMessage).toContain("http://127.0.0.1:1");
    const noNamespaces = new PulsarAdapter(
      testConfig({ id: "dead-pulsar", adminUrl: "http://127.0.0.1:1", timeoutSeconds: 2 }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    expect((await errorOf(noNamespaces.listDlqs()))?.kind).toBe("unreachable");
  });
});

async function browseAll(a: PulsarAdapter, name: string) {
  return (await a.browse(name, { offset: 0, limit: 1000 })).letters;
}
