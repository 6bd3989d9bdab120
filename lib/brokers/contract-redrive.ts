/**
 * The write (redrive) contract every broker adapter passes against its real broker, beside the read
 * contract in `contract.ts`. It holds adapters to DESIGN.md's conservation rule: a letter is
 * published to its target and confirmed before it leaves the DLQ, a failure leaves it where it was,
 * letters not requested are untouched and keep their order, markers are set (count replaced, never
 * appended; original message id kept across cycles).
 *
 * An adapter's integration test calls `runRedriveContract("rabbitmq", fixtureFactory)`. The fixture
 * fills DLQs by real dead-lettering (as in the read contract), reads what arrived at an origin or
 * target without the adapter's help, and lets moved letters die again by the broker's own mechanism.
 * Nothing here branches on broker kind: only on capabilities and on what the fixture declares.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { displayText } from "@/lib/brokers/display";
import type { ContractLetterInput } from "@/lib/brokers/contract";
import {
  BrokerError,
  REDRIVE_HEADERS,
  type BrokerAdapter,
  type Letter,
  type MoveRequest,
  type MoveResult,
  type RedriveMarkers,
  type RedriveTarget,
} from "@/lib/brokers/types";

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

    const move = (dlq: string, reqs: MoveRequest[]) => {
      return collectMoves(fx.adapter.moveLetters(dlq, reqs, { ...ro }));
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
  });
}
