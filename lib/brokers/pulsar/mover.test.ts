// The Pulsar mover's rules, against an in-memory DLQ (MoverLink): which letters it copies, acknowledges
// and reports how, in the shared words of move-rules. The broker itself is in the integration tests.
import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import { moveWords } from "@/lib/brokers/move-rules";
import { sha256Hex } from "@/lib/brokers/display";
import { AppError } from "@/lib/errors";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveOptions, MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import type { RemoveRequest } from "@/lib/brokers/contract/remove";
import { shortName, type TopicName } from "@/lib/brokers/pulsar/client";
import type { MoverLink } from "@/lib/brokers/pulsar/link";
import { AckState, decodeMessageId, encodeMessageId, type MessageId } from "@/lib/brokers/pulsar/message-id";
import { PulsarMover } from "@/lib/brokers/pulsar/mover";
import { byEntry } from "@/lib/brokers/pulsar/entries";
import type { OutgoingMessage } from "@/lib/brokers/pulsar/producer";
import type { ReadMessage } from "@/lib/brokers/pulsar/reader";

const ns = { tenant: "t", namespace: "n" };
const DLQ: TopicName = { ...ns, topic: "orders-sub-DLQ" };
const ORIGIN: TopicName = { ...ns, topic: "orders" };
const TARGET: TopicName = { ...ns, topic: "target" };
const NAME = shortName(DLQ);
const move = moveWords("move");
const discard = moveWords("discard");

interface Spec {
  body: string;
  key?: string;
  /** Letters of one batched entry share `entry`. */
  entry: number;
  batch?: { index: number; size: number };
}

const pos = (id: { ledger: bigint; entry: bigint }) => `${id.ledger}:${id.entry}`;

/** A DLQ topic in memory, its console subscription's acknowledgements, topics to publish to. */
class FakePulsar implements MoverLink {
  readonly dlq: ReadMessage[];
  readonly acks = new Set<string>();
  readonly published: Array<{ topic: string; msg: OutgoingMessage }> = [];
  readonly topics = new Set([shortName(DLQ), shortName(ORIGIN), shortName(TARGET)]);
  /** Copies Pulsar refuses, by body. */
  readonly refuse = new Set<string>();
  acked_reads = 0;
  /** The read breaks off after this many messages. */
  breakAfter: number | null = null;

  constructor(specs: Spec[]) {
    this.dlq = specs.map((s) => {
      const id: MessageId = {
        ledger: 7n,
        entry: BigInt(s.entry),
        partition: -1,
        batchIndex: s.batch?.index ?? -1,
        batchSize: s.batch?.size ?? 0,
      };
      return {
        id,
        frame: {
          messageId: encodeMessageId(id),
          payload: Buffer.from(s.body).toString("base64"),
          properties: { REAL_TOPIC: `persistent://${shortName(ORIGIN)}`, app: s.body },
          ...(s.key ? { key: s.key } : {}),
        },
      };
    });
  }

  /** Someone else acknowledges this letter's entry on the console's subscription. */
  takeAway(i: number) {
    this.acks.add(pos(this.dlq[i].id));
  }

  async *read(): AsyncGenerator<ReadMessage> {
    const snapshot = this.dlq.filter((m) => !this.acks.has(pos(m.id)));
    for (const [i, m] of snapshot.entries()) {
      if (i === this.breakAfter)
        throw new BrokerError("protocol", { userMessage: "Pulsar stopped sending letters of the DLQ." });
      yield m;
    }
  }
  async acked(): Promise<AckState> {
    this.acked_reads++;
    return new AckState(
      { ledger: -1n, entry: -1n },
      [...this.acks].map((p) => {
        const [l, e] = p.split(":").map(BigInt);
        return { from: { ledger: l, entry: e - 1n }, to: { ledger: l, entry: e } };
      }),
    );
  }
  async topicExists(t: TopicName) {
    return this.topics.has(shortName(t));
  }
  async producer(t: TopicName) {
    let n = 0;
    return {
      send: async (msg: OutgoingMessage) => {
        if (this.refuse.has(Buffer.from(msg.payload).toString()))
          throw new BrokerError("bad_request", {
            userMessage: "Pulsar refused the copy (ProducerBlockedQuotaExceeded).",
          });
        this.published.push({ topic: shortName(t), msg });
        return encodeMessageId({ ledger: 99n, entry: BigInt(n++) });
      },
      close: async () => undefined,
    };
  }
  async acker() {
    return {
      ack: (messageId: string) => this.acks.add(pos(decodeMessageId(messageId))),
      close: async () => undefined,
    };
  }

  waiting(): string[] {
    return this.dlq
      .filter((m) => !this.acks.has(pos(m.id)))
      .map((m) => Buffer.from(m.frame.payload, "base64").toString());
  }
  bodies(): string[] {
    return this.published.map((p) => Buffer.from(p.msg.payload).toString());
  }
}

const moverOf = (fake: FakePulsar) =>
  new PulsarMover(fake, {
    subscription: "dlq-console",
    ensureSubscription: async () => true,
    letterContext: () => ({ configOrigin: null }),
    isManagedHeader,
  });

const idOf = (fake: FakePulsar, i: number) => {
  const { id } = fake.dlq[i];
  return id.batchIndex >= 0 ? `${id.ledger}-${id.entry}-${id.batchIndex}` : `${id.ledger}-${id.entry}`;
};
const shaOf = (fake: FakePulsar, i: number) => sha256Hex(Buffer.from(fake.dlq[i].frame.payload, "base64"));
const req = (fake: FakePulsar, i: number, over: Partial<MoveRequest> = {}): MoveRequest => ({
  letterId: idOf(fake, i),
  sha256: shaOf(fake, i),
  target: { kind: "origin" },
  markers: { redriveId: "job-1", replayId: `replay-${i}`, redriveCount: 1, originalMessageId: null },
  ...over,
});

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
const moveAll = (fake: FakePulsar, reqs: MoveRequest[], opts?: MoveOptions) => all(moverOf(fake).move(DLQ, reqs, opts));
const plain = (n: number, key?: (i: number) => string | undefined): Spec[] =>
  Array.from({ length: n }, (_, i) => ({ body: `l-${i}`, entry: i, key: key?.(i) }));

describe("PulsarMover.move", () => {
  it("a letter id requested twice is one request: one copy, one result", async () => {
    const fake = new FakePulsar(plain(3));
    const results = await moveAll(fake, [req(fake, 1), { ...req(fake, 1), sha256: "f".repeat(64) }]);
    expect(results).toEqual([
      {
        letterId: idOf(fake, 1),
        outcome: "moved",
        destination: `topic ${shortName(ORIGIN)}`,
        target: shortName(ORIGIN),
        reason: null,
        orderingKey: null,
      },
    ]);
    expect(fake.bodies()).toEqual(["l-1"]);
    expect(fake.published[0].msg.properties["x-dlq-replay-id"]).toBe("replay-1");
    expect(fake.waiting()).toEqual(["l-0", "l-2"]);
  });

  it("a checksum recorded in upper case moves the letter; one that differs is a mismatch in the shared words", async () => {
    const fake = new FakePulsar(plain(2));
    const results = await moveAll(fake, [
      { ...req(fake, 0), sha256: ` ${shaOf(fake, 0).toUpperCase()} ` },
      { ...req(fake, 1), sha256: "0".repeat(64) },
    ]);
    expect(results.map((r) => [r.outcome, r.reason])).toEqual([
      ["moved", null],
      ["checksum_mismatch", move.mismatch],
    ]);
    expect(results[1].target).toBeNull();
    expect(fake.waiting()).toEqual(["l-1"]);
  });

  it("a request the look did not find is missing in the shared words, after the letters found, naming the DLQ; an id no letter can have, before the look", async () => {
    const fake = new FakePulsar(plain(2));
    fake.takeAway(0); // acknowledged before the call: the read skips it
    const results = await moveAll(fake, [req(fake, 0), req(fake, 1), { ...req(fake, 1), letterId: "not-an-id" }]);
    expect(results.map((r) => [r.letterId, r.outcome])).toEqual([
      ["not-an-id", "missing"],
      [idOf(fake, 1), "moved"],
      [idOf(fake, 0), "missing"],
    ]);
    expect(results[0].reason).toMatch(/^No letter in the DLQ can have this id: it is not a Pulsar message position/);
    expect(results[2]).toMatchObject({ reason: move.missing(NAME), destination: null, target: null });
    expect(fake.bodies()).toEqual(["l-1"]);
  });

  it("a letter acknowledged by someone else during the move is missing where it is found, and not copied", async () => {
    const fake = new FakePulsar(plain(3));
    const results = await moveAll(
      fake,
      [0, 1, 2].map((i) => req(fake, i)),
      {
        maxInFlight: 1,
        beforeRemove: async (copy) => {
          if (copy.letterId === idOf(fake, 0)) fake.takeAway(2);
        },
      },
    );
    expect(results.map((r) => r.outcome)).toEqual(["moved", "moved", "missing"]);
    expect(results[2].reason).toBe(move.missing(NAME));
    expect(fake.bodies()).toEqual(["l-0", "l-1"]);
    expect(fake.waiting()).toEqual([]);
  });

  it("reads the acknowledgements again once per window of letters, not per letter", async () => {
    const fake = new FakePulsar(plain(10));
    await moveAll(
      fake,
      fake.dlq.map((_, i) => req(fake, i)),
      { maxInFlight: 4 },
    );
    expect(fake.acked_reads).toBe(2); // before letters 5 and 9
    expect(fake.waiting()).toEqual([]);
  });

  it("a stopped move settles what it sent and claims nothing about the requests it did not reach", async () => {
    const fake = new FakePulsar(plain(3));
    const stop = new AbortController();
    const results = await moveAll(
      fake,
      [0, 1, 2].map((i) => req(fake, i)),
      {
        maxInFlight: 1,
        signal: stop.signal,
        beforeRemove: async () => stop.abort(),
      },
    );
    expect(results.map((r) => r.outcome)).toEqual(["moved"]);
    expect(fake.waiting()).toEqual(["l-1", "l-2"]);
  });

  it("a read that breaks off: the copies sent are settled and acknowledged first, then the error; nothing is called missing", async () => {
    const fake = new FakePulsar(plain(4));
    fake.breakAfter = 2;
    const results: MoveResult[] = [];
    const error = await (async () => {
      for await (const r of moverOf(fake).move(
        DLQ,
        [0, 1, 2, 3].map((i) => req(fake, i)),
      ))
        results.push(r);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrokerError);
    expect(results.map((r) => r.outcome)).toEqual(["moved", "moved"]);
    expect(fake.waiting()).toEqual(["l-2", "l-3"]);
  });

  it("held keys: an earlier call's key is held back, a key of this call is held by the letter that failed, in the shared words", async () => {
    const keys = ["a", "b", "a", "c", "a"];
    const fake = new FakePulsar(plain(5, (i) => keys[i]));
    fake.refuse.add("l-0");
    const results = await moveAll(
      fake,
      [0, 1, 2, 3, 4].map((i) => req(fake, i)),
      { heldKeys: ["c"], maxInFlight: 8 },
    );
    expect(results.map((r) => r.outcome)).toEqual(["failed", "moved", "failed", "failed", "failed"]);
    expect(results[0].reason).toMatch(/refused the copy.*The letter stays in the DLQ\.$/);
    expect(results[0].target).toBeNull();
    expect(results[2].reason).toBe(move.laneBlocked(idOf(fake, 0)));
    expect(results[3].reason).toBe(move.heldBack("c"));
    expect(results[4].reason).toBe(move.laneBlocked(idOf(fake, 0)));
    expect(fake.bodies()).toEqual(["l-1"]);
    expect(fake.waiting()).toEqual(["l-0", "l-2", "l-3", "l-4"]);
  });

  it("the archive hook runs once per moved letter, in DLQ order, one at a time; when it throws the copy is named and the letter stays", async () => {
    const fake = new FakePulsar(plain(4));
    const seen: string[] = [];
    let running = 0;
    const results = await moveAll(
      fake,
      [0, 1, 2, 3].map((i) => req(fake, i, { target: { kind: "queue", name: "target" } })),
      {
        beforeRemove: async (copy: LetterCopy) => {
          expect(running).toBe(0);
          running++;
          await new Promise((r) => setTimeout(r, 5));
          running--;
          seen.push(copy.letterId);
          if (copy.letterId === idOf(fake, 2))
            throw new AppError("unavailable:database", { userMessage: "The database is down." });
        },
      },
    );
    expect(seen).toEqual([0, 1, 2, 3].map((i) => idOf(fake, i)));
    expect(results[2]).toMatchObject({
      outcome: "failed",
      destination: "topic t/n/target",
      target: "t/n/target",
      reason: move.copyNotArchived(
        new AppError("unavailable:database", { userMessage: "The database is down." }),
        "topic t/n/target",
        null,
      ),
    });
    expect(results.map((r) => r.target)).toEqual(Array(4).fill("t/n/target"));
    expect(fake.waiting()).toEqual(["l-2"]);
  });

  it("a repair that edits Pulsar's own property is refused in the shared words; nothing is published", async () => {
    const fake = new FakePulsar(plain(1));
    const [r] = await moveAll(
      fake,
      [req(fake, 0, { repair: { operationId: "op", setHeaders: { REAL_TOPIC: "x" } } })],
      { beforeRemove: async () => undefined },
    );
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(
      /^The property "REAL_TOPIC" is kept by Pulsar's dead-lettering.*Nothing was published; the letter stays in the DLQ\.$/,
    );
    expect(fake.published).toEqual([]);
  });

  it("a repaired copy carries the edits and names its copy id", async () => {
    const fake = new FakePulsar(plain(1));
    const [r] = await moveAll(
      fake,
      [req(fake, 0, { repair: { operationId: "op", setHeaders: { app: "fixed" }, body: Buffer.from("new") } })],
      { beforeRemove: async () => undefined },
    );
    expect(r).toMatchObject({ outcome: "moved", target: "t/n/orders", copyId: "t/n/orders/99:0:-1" });
    expect(fake.published[0].msg.properties).toMatchObject({ app: "fixed", "x-dlq-repaired-by-operation": "op" });
    expect(fake.bodies()).toEqual(["new"]);
  });

  const batch = (n: number): Spec[] =>
    Array.from({ length: n }, (_, i) => ({ body: `b-${i}`, entry: 0, batch: { index: i, size: n } }));

  it("a batched entry leaves whole: every letter picked, one acknowledgement of the entry", async () => {
    const fake = new FakePulsar([...batch(3), { body: "after", entry: 1 }]);
    const results = await moveAll(
      fake,
      [0, 1, 2].map((i) => req(fake, i)),
    );
    expect(results.map((r) => r.outcome)).toEqual(["moved", "moved", "moved"]);
    expect(fake.waiting()).toEqual(["after"]);
  });

  it("a batched entry with letters not picked does not move; one that fails stops the rest of its entry", async () => {
    const partial = new FakePulsar(batch(3));
    const p = await moveAll(partial, [req(partial, 0), req(partial, 2)]);
    expect(p.map((r) => r.outcome)).toEqual(["failed", "failed"]);
    expect(p[0].reason).toMatch(/shares one Pulsar entry with 1 other letter.*to move it/);
    expect(partial.published).toEqual([]);

    const fake = new FakePulsar(batch(3));
    const results = await moveAll(fake, [req(fake, 0), { ...req(fake, 1), sha256: "0".repeat(64) }, req(fake, 2)]);
    expect(results.map((r) => r.outcome)).toEqual(["failed", "checksum_mismatch", "failed"]);
    expect(results[0]).toMatchObject({ target: "t/n/orders" });
    expect(results[0].reason).toMatch(/copy was published.*duplicate/);
    expect(results[2]).toMatchObject({
      target: null,
      reason: expect.stringMatching(/^Not moved: letter 7-0-1 of the same/),
    });
    expect(fake.bodies()).toEqual(["b-0"]);
    expect(fake.waiting()).toEqual(["b-0", "b-1", "b-2"]);
  });
});

describe("PulsarMover.remove", () => {
  const removeAll = (fake: FakePulsar, reqs: RemoveRequest[], beforeRemove: (c: LetterCopy) => Promise<void>) =>
    all(moverOf(fake).remove(DLQ, reqs, { operationId: "op", beforeRemove }));
  const rr = (fake: FakePulsar, i: number): RemoveRequest => ({ letterId: idOf(fake, i), sha256: shaOf(fake, i) });

  it("a repeat is one request, an upper-case checksum matches, a refused archive and a letter not found use the shared words", async () => {
    const fake = new FakePulsar(plain(4));
    fake.takeAway(3);
    const copies: string[] = [];
    const results = await removeAll(
      fake,
      [
        rr(fake, 0),
        { ...rr(fake, 0), sha256: "f".repeat(64) },
        { ...rr(fake, 1), sha256: shaOf(fake, 1).toUpperCase() },
        rr(fake, 2),
        rr(fake, 3),
      ],
      async (c) => {
        if (c.letterId === idOf(fake, 2)) throw new Error("ECONNRESET secret");
        copies.push(c.letterId);
      },
    );
    expect(results).toEqual([
      { letterId: idOf(fake, 0), outcome: "removed", reason: null },
      { letterId: idOf(fake, 1), outcome: "removed", reason: null },
      { letterId: idOf(fake, 2), outcome: "failed", reason: discard.notArchived(new Error("x")) },
      { letterId: idOf(fake, 3), outcome: "missing", reason: discard.missing(NAME) },
    ]);
    expect(copies).toEqual([idOf(fake, 0), idOf(fake, 1)]);
    expect(fake.waiting()).toEqual(["l-2"]);
  });

  it("a letter acknowledged by someone else during the discard is missing, and not archived", async () => {
    const fake = new FakePulsar(plain(3));
    const copies: string[] = [];
    const results = await removeAll(
      fake,
      [0, 1, 2].map((i) => rr(fake, i)),
      async (c) => {
        if (c.letterId === idOf(fake, 0)) fake.takeAway(1);
        copies.push(c.letterId);
      },
    );
    expect(results.map((r) => r.outcome)).toEqual(["removed", "missing", "removed"]);
    expect(results[1].reason).toBe(discard.missing(NAME));
    expect(copies).toEqual([idOf(fake, 0), idOf(fake, 2)]);
  });
});

describe("move results", () => {
  it("name the target topic as the adapter names topics", async () => {
    const fake = new FakePulsar(plain(1));
    const [r] = await moveAll(fake, [req(fake, 0, { target: { kind: "queue", name: "other/ns/elsewhere" } })]);
    expect(r).toMatchObject({ outcome: "failed", target: null, reason: expect.stringMatching(/does not exist/) });
    fake.topics.add("other/ns/elsewhere");
    const fake2 = new FakePulsar(plain(1));
    fake2.topics.add("other/ns/elsewhere");
    const [moved]: MoveResult[] = await moveAll(fake2, [
      req(fake2, 0, { target: { kind: "queue", name: "other/ns/elsewhere" } }),
    ]);
    expect(moved).toMatchObject({ outcome: "moved", target: "other/ns/elsewhere" });
  });
});

describe("byEntry", () => {
  it("groups a batch's letters and hands each entry out as soon as its last letter was read", async () => {
    const fake = new FakePulsar([
      { body: "single", entry: 0 },
      { body: "b-0", entry: 1, batch: { index: 0, size: 2 } },
      { body: "b-1", entry: 1, batch: { index: 1, size: 2 } },
      { body: "last", entry: 2 },
    ]);
    let read = 0;
    const source = (async function* () {
      for (const m of fake.dlq) {
        read++;
        yield m;
      }
    })();
    const seen: Array<[string[], number]> = [];
    for await (const entry of byEntry(source))
      seen.push([entry.map((m) => Buffer.from(m.frame.payload, "base64").toString()), read]);
    expect(seen).toEqual([
      [["single"], 1],
      [["b-0", "b-1"], 3],
      [["last"], 4],
    ]);
  });
});
