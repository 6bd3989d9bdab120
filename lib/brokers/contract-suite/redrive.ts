/**
 * The write (redrive) contract every broker adapter passes against its real broker, beside the read
 * contract in `contract.ts`. It holds adapters to DESIGN.md's conservation rule: a letter is
 * published to its target and confirmed before it leaves the DLQ, a failure leaves it where it was,
 * letters not requested are untouched and keep their order, markers are set (count replaced, never
 * appended; original message id kept across cycles). It also pins the rules every mover applies the
 * same way (lib/brokers/move-rules.ts): a repeated id is one request, a checksum is hex in any case,
 * twins are interchangeable, a letter is "missing" only when the DLQ was looked through, and a letter
 * that arrives while the call runs is not touched.
 *
 * An adapter's integration test calls `runRedriveContract("rabbitmq", fixtureFactory)`. The fixture
 * fills DLQs by real dead-lettering (as in the read contract), reads what arrived at an origin or
 * target without the adapter's help, and lets moved letters die again by the broker's own mechanism.
 * Nothing here branches on broker kind: only on capabilities and on what the fixture declares.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { displayText } from "@/lib/brokers/display";
import type { ContractLetterInput } from "@/lib/brokers/contract-suite/read";
import { moveWords, type MoveVerb } from "@/lib/brokers/move-rules";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REDRIVE_HEADERS, type RedriveMarkers } from "@/lib/brokers/contract/markers";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { Letter, LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveRequest, MoveResult, RedriveTarget } from "@/lib/brokers/contract/move";

/** A letter for `createDlq`; `orderingKey` is used only when the fixture declares `orderingKeys`. */
export interface RedriveLetterInput extends ContractLetterInput {
  orderingKey?: string;
}

/** A letter as it arrived at an origin or target, read by the fixture with the broker's own client. */
export interface ArrivedLetter {
  body: Uint8Array;
  /** Header (or message attribute) values as text; the four REDRIVE_HEADERS must be among them. */
  headers: Record<string, string>;
  messageId: string | null;
  /** Kafka key / FIFO group where the broker has one. */
  orderingKey?: string | null;
}

/** Somewhere letters can be moved to, readable by the fixture. */
export interface RedriveDestination {
  name: string;
  /**
   * Everything that arrived here so far, in arrival order (where the broker has one), WITHOUT
   * taking it away (consume without ack and return, receive and release, read from the start of the
   * topic). The contract polls it until what it expects is there.
   */
  read(): Promise<ArrivedLetter[]>;
}

export interface RedriveContractFixture {
  adapter: BrokerAdapter;
  /** A fresh DLQ filled with these letters, in order, by real dead-lettering (as in the read contract); returns its name. */
  createDlq(letters: RedriveLetterInput[]): Promise<string>;
  /** The origin the letters of this DLQ came from (what `{ kind: "origin" }` resolves to). */
  originOf(dlq: string): RedriveDestination;
  /** A fresh extra queue or topic, to move letters to explicitly (`{ kind: "queue", name }`). */
  createQueue(): Promise<RedriveDestination>;
  /**
   * Makes every letter now at the origin of `dlq` die again into `dlq` by the broker's (or the
   * consumer framework's) own mechanism: reject, receive past maxReceiveCount, republish to the DLT
   * with its headers as an error handler would. Resolves when they are back in the DLQ.
   */
  deadLetterAgain(dlq: string): Promise<void>;
  /** Deletes everything the fixture created and closes its adapters. */
  cleanup(): Promise<void>;
  /** false for Kafka: moved letters stay in the log and are shown with `handled` instead. */
  removesFromDlq: boolean;
  /** Letters carry ordering keys (Kafka key, FIFO group) that createDlq honours. */
  orderingKeys: boolean;
  /** Options every read and move passes (e.g. `acceptRisk` where reads are always risky). */
  readOptions?: { acceptRisk?: boolean };
  /** How long to wait for letters to show up at a destination or back in the DLQ (default 15 s). */
  settleMs?: number;
  /**
   * Content-identical letters without an id of their own have no identity of their own on this
   * broker: they are told apart only by their order (RabbitMQ letters without a message_id: `k-X`,
   * `k-X~2`), so when one leaves, the next is listed under its id. false where each keeps an id of
   * its own (SQS MessageId, Kafka offset, Pulsar message id).
   */
  twins: boolean;
  /**
   * Takes this letter (as browse gave it) out of `dlq` behind the console's back, with the broker's
   * own client, as another consumer would (RabbitMQ: get and ack; SQS: receive and delete; Kafka:
   * deleteRecords past it; Pulsar: acknowledge it on the console's subscription, which is how a
   * letter leaves a Pulsar DLQ). Resolves true once it is gone, false when it could not be
   * taken because a reader holds it right now (a running move's own read: delivered and not acked,
   * in flight).
   */
  takeAway(dlq: string, letter: Letter): Promise<boolean>;
  /** `takeAway` can take only the first letter of the DLQ (Kafka: deleteRecords truncates a partition up to an offset). */
  takeAwayFirstOnly?: boolean;
  /**
   * Dead-letters these fresh letters into the existing `dlq`, after what it holds, by the same real
   * mechanism as `createDlq`; resolves once they are in it. The contract calls it while nothing it
   * moved is waiting at the DLQ's origin (it moves to a queue of `createQueue` first).
   */
  deadLetterMore(dlq: string, letters: RedriveLetterInput[]): Promise<void>;
}

const text = (s: string) => new TextEncoder().encode(s);
const bodyText = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function headerOf(l: Letter, name: string): string | null {
  const h = l.headers.find((x) => x.name === name);
  return h ? displayText(h.value) : null;
}

export function markersFor(
  redriveId: string,
  redriveCount = 1,
  originalMessageId: string | null = null,
): RedriveMarkers {
  return { redriveId, replayId: randomUUID(), redriveCount, originalMessageId };
}

/** Every result of an adapter's iterable (moveLetters, removeLetters, republish), in order. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const r of it) out.push(r);
  return out;
}

export const collectMoves: (it: AsyncIterable<MoveResult>) => Promise<MoveResult[]> = collect;

/**
 * A "missing" reason is the shared words (`moveWords(verb).missing(where)`, with the broker's noun
 * for its DLQ) and names the DLQ the call looked through.
 */
export function expectMissingReason(reason: string | null, verb: MoveVerb, dlq: string): void {
  const hole = "\u0000";
  const said = reason ?? "";
  const fits = (["DLQ", "DLT"] as const).some((noun) => {
    const words = moveWords(verb, noun);
    // The general words, or the words with the broker's fact (what its look saw) after the name.
    return [words.missing(hole), words.missing(hole, hole)].some((shape) => {
      const [pre, ...rest] = shape.split(hole);
      const post = rest[rest.length - 1];
      return said.startsWith(`${pre}${dlq}`) && said.endsWith(post);
    });
  });
  expect(fits, `a missing reason in the shared words naming ${dlq}, got: ${reason}`).toBe(true);
}

export function runRedriveContract(name: string, factory: () => Promise<RedriveContractFixture>) {
  describe(`redrive contract: ${name}`, () => {
    let fx: RedriveContractFixture;
    let ro: { acceptRisk?: boolean };
    const caps = () => fx.adapter.capabilities;
    const ordered = () => caps().stableOrder !== false;
    const settle = () => fx.settleMs ?? 15_000;

    beforeAll(async () => {
      fx = await factory();
      ro = fx.readOptions ?? {};
    });
    afterAll(async () => {
      await fx?.cleanup();
    });

    const move = (dlq: string, reqs: MoveRequest[], beforeRemove?: (copy: LetterCopy) => Promise<void>) => {
      return collectMoves(fx.adapter.moveLetters(dlq, reqs, { ...ro, ...(beforeRemove ? { beforeRemove } : {}) }));
    };
    const browseAll = async (dlq: string) => (await fx.adapter.browse(dlq, { offset: 0, limit: 1000, ...ro })).letters;
    /** Letters still waiting in the DLQ: present and not handled. */
    const waiting = (ls: Letter[]) => ls.filter((l) => !l.handled);
    const request = (l: Letter, target: RedriveTarget, markers: RedriveMarkers): MoveRequest => ({
      letterId: l.id,
      sha256: l.sha256,
      target,
      markers,
    });

    /** Polls `read` until `done` holds (or the settle time passes) and returns the last read. */
    async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
      const end = Date.now() + settle();
      for (;;) {
        const v = await read();
        if (done(v) || Date.now() > end) return v;
        await sleep(100);
      }
    }
    /** The DLQ's letters once all `n` written are visible (a broker's reader may lag a fresh write under load). */
    const browseFilled = (dlq: string, n: number) =>
      until(
        () => browseAll(dlq),
        (ls) => ls.length >= n,
      );
    const arrivedWith = (dest: RedriveDestination, replayIds: string[]) =>
      until(
        async () => (await dest.read()).filter((a) => replayIds.includes(a.headers[REDRIVE_HEADERS.replayId])),
        (as) => as.length >= replayIds.length,
      );

    /** Depth is exact after a move on brokers that remove (maybe after a short lag); Kafka keeps all and marks. */
    async function expectDlqHolds(dlq: string, bodies: string[], total: number) {
      const letters = await until(
        () => browseAll(dlq),
        (ls) => waiting(ls).length === bodies.length,
      );
      const left = waiting(letters);
      if (ordered()) expect(left.map((l) => bodyText(l.body))).toEqual(bodies);
      else expect(left.map((l) => bodyText(l.body)).sort()).toEqual([...bodies].sort());
      if (fx.removesFromDlq) {
        expect(letters).toHaveLength(bodies.length);
        const d = await until(
          async () => (await fx.adapter.describeDlq(dlq)).depth,
          (x) => x === bodies.length,
        );
        expect(d).toBe(bodies.length);
      } else {
        expect(letters).toHaveLength(total);
        expect(letters.filter((l) => l.handled?.outcome === "redriven")).toHaveLength(total - bodies.length);
      }
    }

    it("moves 2 of 5 to the origin byte-exact with markers; the other 3 stay in order; absent ids are missing", async () => {
      const binary = caps().binaryBodies !== false;
      const bodies = [
        text("letter-0"),
        binary ? Uint8Array.from([0x00, 0xff, 0xc3, 0x28, 0x7f]) : text("lettre-1 Ünïcödé 💥"),
        text("letter-2"),
        text("letter-3 \r\n\t"),
        text("letter-4"),
      ];
      const dlq = await fx.createDlq(
        bodies.map((body, i) => ({
          body,
          messageId: `redrive-msg-${i}-${randomUUID()}`,
          headers: { "x-app": `app-${i}` },
        })),
      );
      const before = await browseAll(dlq);
      expect(before).toHaveLength(5);
      const chosen = [before[1], before[3]];
      const job = randomUUID();
      const marks = chosen.map(() => markersFor(job));
      const reqs = chosen.map((l, i) =>
        request(l, { kind: "origin" }, { ...marks[i], originalMessageId: l.messageId }),
      );
      reqs.push({
        letterId: "no-such-letter-id",
        sha256: "0".repeat(64),
        target: { kind: "origin" },
        markers: markersFor(job),
      });

      const results = await move(dlq, reqs);
      expect(results.map((r) => r.letterId).sort()).toEqual(reqs.map((r) => r.letterId).sort());
      const by = new Map(results.map((r) => [r.letterId, r]));
      for (const l of chosen) {
        expect(by.get(l.id), JSON.stringify(by.get(l.id))).toMatchObject({ outcome: "moved", reason: null });
        expect(by.get(l.id)!.destination).toMatch(/\S/);
      }
      expect(by.get("no-such-letter-id")).toMatchObject({ outcome: "missing" });
      expect(by.get("no-such-letter-id")!.reason).toMatch(/\S/);

      const arrived = await arrivedWith(
        fx.originOf(dlq),
        marks.map((m) => m.replayId),
      );
      expect(arrived).toHaveLength(2);
      chosen.forEach((l, i) => {
        const a = arrived.find((x) => x.headers[REDRIVE_HEADERS.replayId] === marks[i].replayId)!;
        expect(a, `letter ${l.id} arrived`).toBeDefined();
        expect(same(a.body, l.body), `body of ${l.id} byte-exact`).toBe(true);
        expect(a.headers[REDRIVE_HEADERS.redriveId]).toBe(job);
        expect(a.headers[REDRIVE_HEADERS.redriveCount]).toBe("1");
        expect(a.headers[REDRIVE_HEADERS.originalMessageId]).toBe(l.messageId);
        // The producer's own headers travel with the letter.
        expect(a.headers["x-app"]).toBe(headerOf(l, "x-app"));
        if (caps().producerMessageIds !== false) expect(a.messageId).toBe(l.messageId);
      });
      if (ordered())
        expect(arrived.map((a) => a.headers[REDRIVE_HEADERS.replayId])).toEqual(marks.map((m) => m.replayId));

      await expectDlqHolds(
        dlq,
        [before[0], before[2], before[4]].map((l) => bodyText(l.body)),
        5,
      );
      // Ids of the letters left are unchanged: the index still finds them.
      const after = waiting(await browseAll(dlq));
      expect(after.map((l) => l.id).sort()).toEqual([before[0], before[2], before[4]].map((l) => l.id).sort());
    });

    it("does not move a letter whose checksum no longer matches", async () => {
      const dlq = await fx.createDlq([0, 1].map((i) => ({ body: text(`checksum-${i}`) })));
      const before = await browseAll(dlq);
      const job = randomUUID();
      const results = await move(dlq, [
        { ...request(before[0], { kind: "origin" }, markersFor(job)), sha256: "f".repeat(64) },
      ]);
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ letterId: before[0].id, outcome: "checksum_mismatch" });
      expect(results[0].reason).toMatch(/\S/);
      await expectDlqHolds(dlq, ["checksum-0", "checksum-1"], 2);
      await sleep(300);
      expect((await fx.originOf(dlq).read()).filter((a) => a.headers[REDRIVE_HEADERS.redriveId] === job)).toHaveLength(
        0,
      );
    });

    it("moves to an explicitly named other queue", async () => {
      const dlq = await fx.createDlq(
        [0, 1, 2].map((i) => ({ body: text(`explicit-${i}`), messageId: `explicit-${i}-${randomUUID()}` })),
      );
      const before = await browseAll(dlq);
      const target = await fx.createQueue();
      const job = randomUUID();
      const marks = [markersFor(job, 1, before[2].messageId)];
      const results = await move(dlq, [request(before[2], { kind: "queue", name: target.name }, marks[0])]);
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ letterId: before[2].id, outcome: "moved" });
      expect(results[0].destination).toContain(target.name);
      const arrived = await arrivedWith(target, [marks[0].replayId]);
      expect(arrived).toHaveLength(1);
      expect(bodyText(arrived[0].body)).toBe("explicit-2");
      await expectDlqHolds(dlq, ["explicit-0", "explicit-1"], 3);
      await sleep(300);
      expect((await fx.originOf(dlq).read()).filter((a) => a.headers[REDRIVE_HEADERS.redriveId] === job)).toHaveLength(
        0,
      );
    });

    it("a target that does not exist: a typed error or 'failed', and the DLQ keeps every letter", async () => {
      const dlq = await fx.createDlq([0, 1, 2].map((i) => ({ body: text(`nowhere-${i}`) })));
      const before = await browseAll(dlq);
      const missing = `redrive-contract-missing-${Date.now()}`;
      const job = randomUUID();
      let results: MoveResult[] = [];
      let error: unknown = null;
      try {
        results = await move(
          dlq,
          before.map((l) => request(l, { kind: "queue", name: missing }, markersFor(job))),
        );
      } catch (e) {
        error = e;
      }
      if (error) {
        expect(error).toBeInstanceOf(BrokerError);
        expect((error as BrokerError).kind).toBe("not_found");
        expect((error as BrokerError).userMessage).toContain(missing);
      } else {
        expect(results).toHaveLength(3);
        for (const r of results) {
          expect(r.outcome).toBe("failed");
          expect(r.reason).toMatch(/\S/);
        }
      }
      await expectDlqHolds(dlq, ["nowhere-0", "nowhere-1", "nowhere-2"], 3);
      expect(waiting(await browseAll(dlq)).map((l) => l.id)).toEqual(before.map((l) => l.id));
    });

    it("markers across two cycles: count replaced (2, not appended), original message id kept", async () => {
      const dlq = await fx.createDlq([
        { body: text("cycle"), messageId: `cycle-${randomUUID()}`, headers: { "x-app": "cycle" } },
      ]);
      const [first] = await browseAll(dlq);
      const origin = fx.originOf(dlq);
      const job1 = randomUUID();
      const m1 = markersFor(job1, 1, first.messageId);
      expect((await move(dlq, [request(first, { kind: "origin" }, m1)]))[0]).toMatchObject({ outcome: "moved" });
      expect(await arrivedWith(origin, [m1.replayId])).toHaveLength(1);

      await fx.deadLetterAgain(dlq);
      const back = await until(
        async () => waiting(await browseAll(dlq)).filter((l) => headerOf(l, REDRIVE_HEADERS.replayId) === m1.replayId),
        (ls) => ls.length === 1,
      );
      expect(back, "the letter died again into the DLQ with its markers").toHaveLength(1);
      const second = back[0];
      expect(headerOf(second, REDRIVE_HEADERS.redriveCount)).toBe("1");
      expect(headerOf(second, REDRIVE_HEADERS.originalMessageId)).toBe(first.messageId);
      expect(same(second.body, first.body)).toBe(true);

      // The caller passes the letter's current message id (SQS assigns a new one on every send): the first one must win.
      const job2 = randomUUID();
      const m2 = markersFor(job2, Number(headerOf(second, REDRIVE_HEADERS.redriveCount)) + 1, second.messageId);
      expect((await move(dlq, [request(second, { kind: "origin" }, m2)]))[0]).toMatchObject({ outcome: "moved" });
      const [a] = await arrivedWith(origin, [m2.replayId]);
      expect(a).toBeDefined();
      expect(a.headers[REDRIVE_HEADERS.redriveCount]).toBe("2");
      expect(a.headers[REDRIVE_HEADERS.redriveId]).toBe(job2);
      expect(a.headers[REDRIVE_HEADERS.originalMessageId]).toBe(first.messageId);
      expect(a.headers["x-app"]).toBe("cycle");
      expect(same(a.body, first.body)).toBe(true);
      if (caps().producerMessageIds !== false) expect(a.messageId).toBe(first.messageId);
    });

    it("ordering: letters arrive in DLQ order (per ordering key where the broker has keys)", async () => {
      const keys = ["k-a", "k-b", "k-a", "k-c", "k-b", "k-a", "k-c", "k-a"];
      const dlq = await fx.createDlq(
        keys.map((k, i) => ({ body: text(`order-${i}`), orderingKey: fx.orderingKeys ? k : undefined })),
      );
      const before = await browseAll(dlq);
      expect(before).toHaveLength(keys.length);
      const job = randomUUID();
      const marks = before.map(() => markersFor(job));
      // Requested in reverse: the adapter, not the caller's list, decides the order.
      const reqs = before
        .map((l, i) => request(l, { kind: "origin" }, { ...marks[i], originalMessageId: l.messageId }))
        .reverse();
      const results = await move(dlq, reqs);
      expect(results.filter((r) => r.outcome === "moved")).toHaveLength(keys.length);
      const arrived = await arrivedWith(
        fx.originOf(dlq),
        marks.map((m) => m.replayId),
      );
      expect(arrived).toHaveLength(keys.length);
      const dlqOrderOf = (a: ArrivedLetter) =>
        marks.findIndex((m) => m.replayId === a.headers[REDRIVE_HEADERS.replayId]);
      if (fx.orderingKeys) {
        for (const l of before) expect(l.orderingKey, "createDlq honours ordering keys").not.toBeNull();
        const perKey = new Map<string, number[]>();
        for (const a of arrived) {
          const k = before[dlqOrderOf(a)].orderingKey!;
          perKey.set(k, [...(perKey.get(k) ?? []), dlqOrderOf(a)]);
        }
        expect(perKey.size).toBeGreaterThan(1);
        for (const [k, seq] of perKey) expect(seq, `key ${k}`).toEqual([...seq].sort((x, y) => x - y));
      } else if (ordered()) {
        expect(arrived.map(dlqOrderOf)).toEqual(before.map((_, i) => i));
      } else {
        expect(arrived.map(dlqOrderOf).sort((x, y) => x - y)).toEqual(before.map((_, i) => i));
      }
      await expectDlqHolds(dlq, [], keys.length);
    });

    // ---- The rules every mover applies the same way (lib/brokers/move-rules.ts), on every broker. ----

    const toQueue = (dest: RedriveDestination): RedriveTarget => ({ kind: "queue", name: dest.name });
    const copiesOf = async (dest: RedriveDestination, job: string) =>
      (await dest.read()).filter((a) => a.headers[REDRIVE_HEADERS.redriveId] === job);
    /** The copies of `job` at `dest` once `n` are there, read again a moment later so that an extra copy shows. */
    async function settledCopies(dest: RedriveDestination, job: string, n: number) {
      await until(
        () => copiesOf(dest, job),
        (as) => as.length >= n,
      );
      await sleep(300);
      return copiesOf(dest, job);
    }
    const sortedBodies = (as: Array<{ body: Uint8Array }>) => as.map((a) => bodyText(a.body)).sort();
    const expectIds = (got: Letter[], want: Letter[]) =>
      ordered()
        ? expect(got.map((l) => l.id)).toEqual(want.map((l) => l.id))
        : expect(got.map((l) => l.id).sort()).toEqual(want.map((l) => l.id).sort());
    /** Nothing of `dlq` waits any more (on brokers that remove, its depth is 0). */
    async function expectNoneWaiting(dlq: string) {
      expect(
        waiting(
          await until(
            () => browseAll(dlq),
            (ls) => waiting(ls).length === 0,
          ),
        ).map((l) => bodyText(l.body)),
      ).toEqual([]);
      if (fx.removesFromDlq)
        expect(
          await until(
            async () => (await fx.adapter.describeDlq(dlq)).depth,
            (d) => d === 0,
          ),
        ).toBe(0);
    }
    const distinct = (label: string, n: number) =>
      fx.createDlq(
        Array.from({ length: n }, (_, i) => ({
          body: text(`${label}-${i}`),
          messageId: `${label}-${i}-${randomUUID()}`,
        })),
      );

    it("a letter id requested twice: one result, moved once (the target holds one copy); the others untouched", async () => {
      const dlq = await distinct("repeat", 3);
      const before = await browseFilled(dlq, 3);
      const [picked, ...others] = [before[1], before[0], before[2]];
      const target = await fx.createQueue();
      const job = randomUUID();
      const first = markersFor(job, 1, picked.messageId);
      const results = await move(dlq, [
        request(picked, toQueue(target), first),
        // The repeat is dropped whatever it carries: markers of its own, a checksum that matches nothing.
        { ...request(picked, toQueue(target), markersFor(job, 1, picked.messageId)), sha256: "f".repeat(64) },
      ]);
      expect(results).toEqual([expect.objectContaining({ letterId: picked.id, outcome: "moved", reason: null })]);
      const copies = await settledCopies(target, job, 1);
      expect(copies).toHaveLength(1);
      expect(copies[0].headers[REDRIVE_HEADERS.replayId]).toBe(first.replayId);
      expect(same(copies[0].body, picked.body)).toBe(true);
      await expectDlqHolds(
        dlq,
        others.map((l) => bodyText(l.body)),
        3,
      );
      expectIds(waiting(await browseAll(dlq)), others);
    });

    it("a checksum recorded in upper-case hex moves the letter as in lower case", async () => {
      const dlq = await distinct("upper", 2);
      const before = await browseFilled(dlq, 2);
      const target = await fx.createQueue();
      const job = randomUUID();
      const results = await move(dlq, [
        { ...request(before[0], toQueue(target), markersFor(job)), sha256: before[0].sha256.toUpperCase() },
      ]);
      expect(results).toEqual([expect.objectContaining({ letterId: before[0].id, outcome: "moved", reason: null })]);
      const copies = await settledCopies(target, job, 1);
      expect(copies).toHaveLength(1);
      expect(same(copies[0].body, before[0].body)).toBe(true);
      await expectDlqHolds(dlq, [bodyText(before[1].body)], 2);
      expectIds(waiting(await browseAll(dlq)), [before[1]]);
    });

    it("twins: two identical letters without ids and a third; the first twin alone, then the second twin (by its first id) and the third: all moved, the DLQ empty", async () => {
      const twin = (): RedriveLetterInput => ({ body: text("twin body"), headers: { "x-app": "twin" } });
      const dlq = await fx.createDlq([twin(), twin(), { body: text("not a twin"), headers: { "x-app": "other" } }]);
      const before = await browseAll(dlq);
      expect(new Set(before.map((l) => l.id)).size).toBe(3);
      const twins = before.filter((l) => bodyText(l.body) === "twin body");
      const other = before.find((l) => bodyText(l.body) === "not a twin")!;
      expect(twins).toHaveLength(2);
      const target = await fx.createQueue();
      const job = randomUUID();

      const one = await move(dlq, [request(twins[0], toQueue(target), markersFor(job))]);
      expect(one).toEqual([expect.objectContaining({ letterId: twins[0].id, outcome: "moved", reason: null })]);
      const left = await until(
        async () => waiting(await browseAll(dlq)),
        (ls) => ls.length === 2,
      );
      // Where twins have no identity of their own, the twin left is now listed under the first id.
      const twinLeft = left.find((l) => bodyText(l.body) === "twin body")!;
      expect(twinLeft.id).toBe(fx.twins ? twins[0].id : twins[1].id);

      // Asked for as browse gave them before the first call.
      const two = await move(dlq, [
        request(twins[1], toQueue(target), markersFor(job)),
        request(other, toQueue(target), markersFor(job)),
      ]);
      expect(two.map((r) => r.letterId).sort()).toEqual([twins[1].id, other.id].sort());
      for (const r of two) expect(r, JSON.stringify(r)).toMatchObject({ outcome: "moved", reason: null });
      expect(sortedBodies(await settledCopies(target, job, 3))).toEqual(["not a twin", "twin body", "twin body"]);
      await expectDlqHolds(dlq, [], 3);
    });

    it("a letter taken away by someone else after it was listed: 'missing' in the shared words; the others move", async () => {
      const dlq = await distinct("gone", 3);
      const before = await browseFilled(dlq, 3);
      // The DLQ's first letter: the one every broker's own client can take away.
      const gone = before[0];
      expect(await fx.takeAway(dlq, gone), "the fixture took the letter away").toBe(true);
      const target = await fx.createQueue();
      const job = randomUUID();
      const results = await move(
        dlq,
        before.map((l) => request(l, toQueue(target), markersFor(job, 1, l.messageId))),
      );
      expect(results.map((r) => r.letterId).sort()).toEqual(before.map((l) => l.id).sort());
      const by = new Map(results.map((r) => [r.letterId, r]));
      expect(by.get(gone.id)).toMatchObject({ outcome: "missing" });
      expectMissingReason(by.get(gone.id)!.reason, "move", dlq);
      for (const l of before.slice(1)) expect(by.get(l.id)).toMatchObject({ outcome: "moved", reason: null });
      expect(sortedBodies(await settledCopies(target, job, 2))).toEqual(sortedBodies(before.slice(1)));
      await expectNoneWaiting(dlq);
    });

    it("a letter taken away by someone else during the move: 'missing' only when no copy was made, 'moved' only with one", async () => {
      const dlq = await distinct("vanish", 3);
      const before = await browseFilled(dlq, 3);
      const target = await fx.createQueue();
      const job = randomUUID();
      let gone: Letter | null = null;
      let taken: boolean | null = null;
      // While the first copy is archived, another letter of the DLQ is taken away (where only the
      // first letter can be, that one, its copy made or not).
      const results = await move(
        dlq,
        before.map((l) => request(l, toQueue(target), markersFor(job, 1, l.messageId))),
        async (copy) => {
          if (gone) return;
          gone = fx.takeAwayFirstOnly ? before[0] : before.find((l) => l.id !== copy.letterId)!;
          taken = await fx.takeAway(dlq, gone);
        },
      );
      expect(gone, "moveLetters called beforeRemove").not.toBeNull();
      const g = gone as unknown as Letter;
      expect(results.map((r) => r.letterId).sort()).toEqual(before.map((l) => l.id).sort());
      const by = new Map(results.map((r) => [r.letterId, r]));
      for (const l of before.filter((x) => x.id !== g.id))
        expect(by.get(l.id), JSON.stringify(by.get(l.id))).toMatchObject({ outcome: "moved", reason: null });
      const r = by.get(g.id)!;
      expect(["moved", "missing"], `taken away: ${taken}; ${JSON.stringify(r)}`).toContain(r.outcome);
      const copies = await settledCopies(target, job, r.outcome === "moved" ? 3 : 2);
      expect(copies.filter((a) => same(a.body, g.body))).toHaveLength(r.outcome === "moved" ? 1 : 0);
      if (r.outcome === "missing") expectMissingReason(r.reason, "move", dlq);
      expect(copies).toHaveLength(r.outcome === "moved" ? 3 : 2);
      await expectNoneWaiting(dlq);
    });

    it("a letter that arrives during the move is not requested: it stays after the others, untouched, and is not reported", async () => {
      const dlq = await distinct("arrive", 3);
      const before = await browseFilled(dlq, 3);
      const [a, b, stays] = before;
      const target = await fx.createQueue();
      const job = randomUUID();
      let arrived = false;
      const results = await move(
        dlq,
        [a, b].map((l) => request(l, toQueue(target), markersFor(job, 1, l.messageId))),
        async () => {
          if (arrived) return;
          arrived = true;
          await fx.deadLetterMore(dlq, [{ body: text("arrive-late"), messageId: `arrive-late-${randomUUID()}` }]);
        },
      );
      expect(arrived, "moveLetters called beforeRemove").toBe(true);
      expect(results.map((r) => r.letterId).sort()).toEqual([a.id, b.id].sort());
      for (const r of results) expect(r, JSON.stringify(r)).toMatchObject({ outcome: "moved", reason: null });
      expect(sortedBodies(await settledCopies(target, job, 2))).toEqual(sortedBodies([a, b]));
      await expectDlqHolds(dlq, [bodyText(stays.body), "arrive-late"], 4);
      expect(waiting(await browseAll(dlq)).some((l) => l.id === stays.id)).toBe(true);
    });
  });
}
