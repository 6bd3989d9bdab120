/**
 * The contract every broker adapter passes against its real broker (in the manner of Auth.js's
 * `runBasicTests` and unstorage's `testDriver`). An adapter's integration test calls
 * `runBrokerContract("rabbitmq", fixtureFactory)`; the fixture fills fresh DLQs through the
 * broker's own dead-lettering, never by writing failure metadata by hand.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { displayText } from "@/lib/brokers/display";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { Letter } from "@/lib/brokers/contract/letter";

export interface ContractLetterInput {
  body: Uint8Array;
  messageId?: string;
  headers?: Record<string, string>;
}

export interface BrokerContractFixture {
  adapter: BrokerAdapter;
  /** Fills a fresh DLQ with these letters, in order, by real dead-lettering; returns its name. */
  createDlq(letters: ContractLetterInput[]): Promise<string>;
  /** An adapter of the same kind pointed at an endpoint where nothing listens. */
  deadAdapter(): BrokerAdapter;
  /** Deletes everything the fixture created and closes its adapters. */
  cleanup(): Promise<void>;
  /** Options every read passes (e.g. `acceptRisk` for brokers whose reads are always risky). */
  readOptions?: { acceptRisk?: boolean };
}

const text = (s: string) => new TextEncoder().encode(s);
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const bodyText = (l: Letter) => Buffer.from(l.body).toString("utf8");

async function collect(it: AsyncIterable<Letter>): Promise<Letter[]> {
  const out: Letter[] = [];
  for await (const l of it) out.push(l);
  return out;
}

async function expectBrokerError(p: Promise<unknown>, kind: BrokerError["kind"]) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e, `expected BrokerError(${kind})`).toBeInstanceOf(BrokerError);
  expect((e as BrokerError).kind).toBe(kind);
  expect((e as BrokerError).userMessage.length).toBeGreaterThan(10);
}

export function runBrokerContract(name: string, factory: () => Promise<BrokerContractFixture>) {
  describe(`broker contract: ${name}`, () => {
    let fx: BrokerContractFixture;
    let ro: { acceptRisk?: boolean };
    // Capabilities relax the suite only where the broker itself cannot do better; absent means the strict assertion.
    const caps = () => fx.adapter.capabilities;
    beforeAll(async () => {
      fx = await factory();
      ro = fx.readOptions ?? {};
    });
    afterAll(async () => {
      await fx?.cleanup();
    });

    it("lists a DLQ with its depth", async () => {
      const dlq = await fx.createDlq([0, 1, 2].map((i) => ({ body: text(`letter-${i}`) })));
      const list = await fx.adapter.listDlqs();
      const found = list.find((d) => d.name === dlq);
      expect(found, `${dlq} listed`).toBeDefined();
      expect(found!.depth).toBe(3);
      expect(found!.kind).toBe(fx.adapter.kind);
      expect((await fx.adapter.describeDlq(dlq)).depth).toBe(3);
    });

    it("pages in order with offsets and hasMore", async () => {
      const dlq = await fx.createDlq([0, 1, 2, 3, 4].map((i) => ({ body: text(`letter-${i}`) })));
      const p1 = await fx.adapter.browse(dlq, { offset: 0, limit: 2, ...ro });
      const p2 = await fx.adapter.browse(dlq, { offset: 2, limit: 2, ...ro });
      const p3 = await fx.adapter.browse(dlq, { offset: 4, limit: 2, ...ro });
      if (caps().stableOrder !== false) {
        expect(p1.letters.map(bodyText)).toEqual(["letter-0", "letter-1"]);
        expect(p2.letters.map(bodyText)).toEqual(["letter-2", "letter-3"]);
        expect(p3.letters.map(bodyText)).toEqual(["letter-4"]);
      } else {
        // No order to hold the broker to: pages still have the right sizes and only these letters,
        // and one page wide enough for all of them shows each exactly once.
        expect([p1, p2, p3].map((p) => p.letters.length)).toEqual([2, 2, 1]);
        const all = ["letter-0", "letter-1", "letter-2", "letter-3", "letter-4"];
        for (const p of [p1, p2, p3]) for (const l of p.letters) expect(all).toContain(bodyText(l));
        const whole = await fx.adapter.browse(dlq, { offset: 0, limit: 10, ...ro });
        expect(whole.letters.map(bodyText).sort()).toEqual(all);
        expect(whole.letters.map((l) => l.position)).toEqual([0, 1, 2, 3, 4]);
      }
      expect([p1.hasMore, p2.hasMore, p3.hasMore]).toEqual([true, true, false]);
      expect(p2.letters.map((l) => l.position)).toEqual([2, 3]);
      expect(p1.depth).toBe(5);
    });

    it("reads without losing letters: same ids twice, depth unchanged, stream sees all", async () => {
      const dlq = await fx.createDlq(
        [0, 1, 2, 3].map((i) => ({ body: text(`letter-${i}`), messageId: i % 2 ? `msg-${i}` : undefined })),
      );
      const a = await fx.adapter.browse(dlq, { offset: 0, limit: 10, ...ro });
      const b = await fx.adapter.browse(dlq, { offset: 0, limit: 10, ...ro });
      expect(a.letters.map((l) => l.id)).toEqual(b.letters.map((l) => l.id));
      expect(a.letters).toHaveLength(4);
      if (caps().producerMessageIds !== false && caps().stableOrder !== false)
        expect(a.letters[1].messageId).toBe("msg-1");
      else for (const l of a.letters) expect(l.messageId).toMatch(/\S/);
      for (const l of a.letters) expect(l.id).toMatch(/^[A-Za-z0-9_~.-]+$/);
      const streamed = await collect(fx.adapter.stream(dlq, ro));
      expect(streamed.map((l) => l.id)).toEqual(a.letters.map((l) => l.id));
      expect((await fx.adapter.describeDlq(dlq)).depth).toBe(4);
    });

    it("finds a letter by id, and null for an unknown id", async () => {
      const dlq = await fx.createDlq([0, 1, 2].map((i) => ({ body: text(`letter-${i}`) })));
      const page = await fx.adapter.browse(dlq, { offset: 0, limit: 10, ...ro });
      const got = await fx.adapter.getLetter(dlq, page.letters[2].id, ro);
      expect(got && bodyText(got)).toBe(caps().stableOrder !== false ? "letter-2" : bodyText(page.letters[2]));
      expect(got!.position).toBe(2);
      expect(await fx.adapter.getLetter(dlq, "no-such-letter-id", ro)).toBeNull();
    });

    it("tells identical letters apart with ids stable across reads", async () => {
      const dlq = await fx.createDlq([0, 1, 2].map(() => ({ body: text("same body"), headers: { kind: "same" } })));
      const a = await fx.adapter.browse(dlq, { offset: 0, limit: 10, ...ro });
      const ids = a.letters.map((l) => l.id);
      expect(new Set(ids).size).toBe(3);
      const b = await fx.adapter.browse(dlq, { offset: 0, limit: 10, ...ro });
      expect(b.letters.map((l) => l.id)).toEqual(ids);
      expect(bodyText((await fx.adapter.getLetter(dlq, ids[2], ro))!)).toBe("same body");
    });

    it("keeps binary and invalid UTF-8 bodies byte-exact", async () => {
      const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
      const invalid = Uint8Array.from([0x7b, 0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x00, 0x7d]);
      if (caps().binaryBodies === false) {
        // The broker cannot carry these bytes: the fixture must refuse them, never encode them behind the suite's back.
        await expect(fx.createDlq([{ body: invalid }])).rejects.toThrow(/UTF-8|Unicode|binary/i);
        await expect(fx.createDlq([{ body: allBytes }])).rejects.toThrow(/UTF-8|Unicode|binary/i);
        // Text it can carry is still byte-exact: multi-byte characters, tab, CR and LF.
        const texts = ["Ünïcödé 💥 ☃", "a\r\nb\tc\n", "\uFEFFbom and \u200Bzero width"].map(text);
        const dlq = await fx.createDlq(texts.map((body) => ({ body })));
        const page = await fx.adapter.browse(dlq, { offset: 0, limit: 10, ...ro });
        expect(page.letters).toHaveLength(texts.length);
        for (const want of texts) {
          const l = page.letters.find((x) => x.sha256 === sha(want));
          expect(l, Buffer.from(want).toString("utf8")).toBeDefined();
          expect(Buffer.from(l!.body).equals(Buffer.from(want))).toBe(true);
          expect(l!.bodySize).toBe(want.length);
          expect(l!.bodyTruncated).toBe(false);
        }
        return;
      }
      const dlq = await fx.createDlq([{ body: allBytes }, { body: invalid }, { body: new Uint8Array(0) }]);
      const page = await fx.adapter.browse(dlq, { offset: 0, limit: 10, ...ro });
      expect(page.letters).toHaveLength(3);
      [allBytes, invalid, new Uint8Array(0)].forEach((want, i) => {
        const l = page.letters[i];
        expect(Buffer.from(l.body).equals(Buffer.from(want))).toBe(true);
        expect(l.bodySize).toBe(want.length);
        expect(l.sha256).toBe(sha(want));
        expect(l.bodyTruncated).toBe(false);
      });
    });

    it("cuts a 5 MB body to maxBodyBytes, with the size and sha256 of the whole", async () => {
      // A broker with a smaller message size limit is tested at that limit (still four times the cut).
      const size = Math.min(5 * 1024 * 1024, caps().maxBodyBytes ?? Infinity);
      const big = new Uint8Array(size);
      const binary = caps().binaryBodies !== false;
      for (let i = 0; i < big.length; i++) big[i] = binary ? (i * 31 + 7) & 0xff : 0x61 + ((i * 7) % 26);
      const dlq = await fx.createDlq([{ body: big }, { body: text("small") }]);
      const page = await fx.adapter.browse(dlq, { offset: 0, limit: 10, maxBodyBytes: 64 * 1024, ...ro });
      if (caps().stableOrder === false) page.letters.sort((a, b) => b.bodySize - a.bodySize);
      const l = page.letters[0];
      expect(l.body.length).toBe(64 * 1024);
      expect(l.bodyTruncated).toBe(true);
      expect(l.bodySize).toBe(big.length);
      expect(l.sha256).toBe(sha(big));
      expect(Buffer.from(l.body).equals(Buffer.from(big.subarray(0, 64 * 1024)))).toBe(true);
      expect(bodyText(page.letters[1])).toBe("small");
      expect(page.letters[1].bodyTruncated).toBe(false);
    });

    it("preserves hostile header values exactly", async () => {
      const hostile = {
        "x-script": "<script>alert(1)</script>",
        "x-link": "javascript:alert(document.cookie)",
        "x-rtl": "abc\u202Etxt.exe",
        "x-zero-width": "pay\u200Bpal\u200D\uFEFF",
        "x-html": `"><img src=x onerror=alert(1)>&amp;`,
      };
      const dlq = await fx.createDlq([{ body: text("{}"), headers: hostile }]);
      const [l] = (await fx.adapter.browse(dlq, { offset: 0, limit: 1, ...ro })).letters;
      for (const [k, v] of Object.entries(hostile)) {
        const h = l.headers.find((x) => x.name === k);
        expect(h, k).toBeDefined();
        expect(displayText(h!.value)).toBe(v);
      }
    });

    it("reports a missing DLQ as not_found", async () => {
      const missing = `contract-missing-${Date.now()}`;
      await expectBrokerError(fx.adapter.describeDlq(missing), "not_found");
      await expectBrokerError(fx.adapter.browse(missing, { offset: 0, limit: 1, ...ro }), "not_found");
      expect((await fx.adapter.listDlqs()).some((d) => d.name === missing)).toBe(false);
    });

    it("reports a dead endpoint as unreachable (unavailable:broker)", async () => {
      const dead = fx.deadAdapter();
      try {
        await expectBrokerError(dead.listDlqs(), "unreachable");
        await expectBrokerError(dead.ping(), "unreachable");
        const e = await dead.listDlqs().catch((x: unknown) => x);
        expect((e as BrokerError).code).toBe("unavailable:broker");
      } finally {
        await dead.close();
      }
    });
  });
}
