/**
 * The repair contract (repair and resubmit) every adapter with `BrokerAdapter.repair`
 * passes against its real broker, on the redrive contract's fixture. It holds `moveLetters` with a
 * `MoveRequest.repair` to conservation: the repaired copy is published and confirmed first; then the
 * original's complete copy is handed to `beforeRemove` (the archive); only then does the original
 * leave the DLQ. Everything not edited travels byte for byte; broker-managed and console headers
 * cannot be edited; a failure at any step leaves the original in the DLQ.
 *
 * An adapter's integration test calls `runRepairContract("rabbitmq", fixtureFactory)` with the same
 * fixture factory as `runRedriveContract`. Nothing here branches on broker kind.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  collectMoves,
  headerOf,
  markersFor,
  type RedriveContractFixture,
  type RedriveDestination,
} from "@/lib/brokers/contract-suite/redrive";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import { capabilitiesOf } from "@/lib/brokers/contract/adapter";
import type { Letter, LetterCopy } from "@/lib/brokers/contract/letter";
import type { LetterRepair, MoveRequest, RedriveTarget } from "@/lib/brokers/contract/move";

const text = (s: string) => new TextEncoder().encode(s);
const bodyText = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function runRepairContract(name: string, factory: () => Promise<RedriveContractFixture>) {
  describe(`repair contract: ${name}`, () => {
    let fx: RedriveContractFixture;
    let ro: { acceptRisk?: boolean };
    const settle = () => fx.settleMs ?? 15_000;

    beforeAll(async () => {
      fx = await factory();
      ro = fx.readOptions ?? {};
      expect(capabilitiesOf(fx.adapter).repair, `${name} has repair`).toBe(true);
    });
    afterAll(async () => {
      await fx?.cleanup();
    });

    const browseAll = async (dlq: string) => (await fx.adapter.browse(dlq, { offset: 0, limit: 1000, ...ro })).letters;
    const waiting = (ls: Letter[]) => ls.filter((l) => !l.handled);

    async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
      const end = Date.now() + settle();
      for (;;) {
        const v = await read();
        if (done(v) || Date.now() > end) return v;
        await sleep(100);
      }
    }
    const arrivedWith = (dest: RedriveDestination, replayId: string) =>
      until(
        async () => (await dest.read()).filter((a) => a.headers[REDRIVE_HEADERS.replayId] === replayId),
        (as) => as.length >= 1,
      );

    /** A repair request for `l` and the copies `beforeRemove` was handed. */
    function repairOf(l: Letter, target: RedriveTarget, repair: Omit<LetterRepair, "operationId">) {
      const operationId = randomUUID();
      const markers = { ...markersFor(operationId, 1), originalMessageId: l.messageId };
      const req: MoveRequest = {
        letterId: l.id,
        sha256: l.sha256,
        target,
        markers,
        repair: { ...repair, operationId },
      };
      return { req, operationId, markers };
    }
    async function run(dlq: string, reqs: MoveRequest[], beforeRemove: (copy: LetterCopy) => Promise<void>) {
      return collectMoves(fx.adapter.moveLetters(dlq, reqs, { ...ro, beforeRemove }));
    }
    /** Waits until the DLQ holds exactly these bodies (unhandled), and returns its letters. */
    async function expectWaiting(dlq: string, bodies: string[]) {
      const ls = await until(
        () => browseAll(dlq),
        (x) => waiting(x).length === bodies.length,
      );
      expect(
        waiting(ls)
          .map((l) => bodyText(l.body))
          .sort(),
      ).toEqual([...bodies].sort());
      return ls;
    }

    it("publishes the repaired copy with the edits and markers, archives the original, then removes it; the others stay", async () => {
      const ids = [0, 1, 2].map((i) => `repair-${i}-${randomUUID()}`);
      const dlq = await fx.createDlq(
        ids.map((messageId, i) => ({
          body: text(`{"order":${i},"status":"PAYED"}`),
          messageId,
          headers: { "x-app": `app-${i}`, "x-tenant": "acme", "x-debug": "remove me" },
        })),
      );
      const before = await browseAll(dlq);
      expect(before).toHaveLength(3);
      const original = before[1];
      const fixed = text('{"order":1,"status":"PAID"}');
      const { req, operationId, markers } = repairOf(
        original,
        { kind: "origin" },
        { body: fixed, setHeaders: { "x-tenant": "acme-eu", "x-fixed-by": "ops" }, removeHeaders: ["x-debug"] },
      );
      const archived: LetterCopy[] = [];
      const results = await run(dlq, [req], async (copy) => {
        // At this point the copy is already confirmed at the origin, and the original is still in the DLQ.
        const there = await fx.originOf(dlq).read();
        expect(
          there.some((a) => a.headers[REDRIVE_HEADERS.replayId] === markers.replayId),
          "copy confirmed before the archive",
        ).toBe(true);
        archived.push(copy);
      });
      expect(results).toHaveLength(1);
      expect(results[0], JSON.stringify(results[0])).toMatchObject({
        letterId: original.id,
        outcome: "moved",
        reason: null,
      });
      expect(results[0].copyId).toMatch(/\S/);

      // The archive got the original as it was, not the repaired copy.
      expect(archived).toHaveLength(1);
      expect(archived[0].letterId).toBe(original.id);
      expect(bodyText(archived[0].letter.body)).toBe('{"order":1,"status":"PAYED"}');
      expect(headerOf(archived[0].letter, "x-debug")).toBe("remove me");
      expect(archived[0].envelope.byteLength).toBeGreaterThan(0);

      const [copy] = await arrivedWith(fx.originOf(dlq), markers.replayId);
      expect(copy, "the repaired copy arrived at the origin").toBeDefined();
      expect(bodyText(copy.body)).toBe('{"order":1,"status":"PAID"}');
      expect(copy.headers["x-tenant"]).toBe("acme-eu");
      expect(copy.headers["x-fixed-by"]).toBe("ops");
      expect(copy.headers).not.toHaveProperty("x-debug");
      // Not edited: kept.
      expect(copy.headers["x-app"]).toBe("app-1");
      expect(copy.headers[REPAIR_HEADER]).toBe(operationId);
      expect(copy.headers[REDRIVE_HEADERS.originalMessageId]).toBe(original.messageId);
      expect(copy.headers[REDRIVE_HEADERS.redriveId]).toBe(operationId);
      // A new message: never the original's id.
      if (copy.messageId !== null) expect(copy.messageId).not.toBe(original.messageId);

      await expectWaiting(dlq, ['{"order":0,"status":"PAYED"}', '{"order":2,"status":"PAYED"}']);
    });

    it("keeps the body byte for byte when only headers are edited", async () => {
      const binary = fx.adapter.capabilities.binaryBodies !== false;
      const body = binary ? Uint8Array.from([0x00, 0xff, 0xc3, 0x28, 0x7f, 0x0a]) : text("plain ✓ text\r\n");
      const dlq = await fx.createDlq([{ body, messageId: `bytes-${randomUUID()}`, headers: { "x-schema": "v1" } }]);
      const [l] = await browseAll(dlq);
      const { req, markers } = repairOf(l, { kind: "origin" }, { setHeaders: { "x-schema": "v2" } });
      const results = await run(dlq, [req], async () => undefined);
      expect(results[0]).toMatchObject({ outcome: "moved" });
      const [copy] = await arrivedWith(fx.originOf(dlq), markers.replayId);
      expect(Buffer.from(copy.body).equals(Buffer.from(body))).toBe(true);
      expect(copy.headers["x-schema"]).toBe("v2");
      await expectWaiting(dlq, []);
    });

    it("refuses to edit a broker-managed or console header: nothing published, nothing archived, the letter stays", async () => {
      const dlq = await fx.createDlq([{ body: text("locked"), messageId: `locked-${randomUUID()}` }]);
      const [l] = await browseAll(dlq);
      const edits: Array<Omit<LetterRepair, "operationId">> = [
        { setHeaders: { [REDRIVE_HEADERS.redriveCount]: "0" } },
        { removeHeaders: ["x-death"] },
        { setHeaders: { "kafka_dlt-original-topic": "elsewhere" } },
      ];
      for (const edit of edits) {
        const { req, markers } = repairOf(l, { kind: "origin" }, edit);
        let archivedCalls = 0;
        const results = await run(dlq, [req], async () => {
          archivedCalls++;
        });
        expect(results[0], JSON.stringify(edit)).toMatchObject({ letterId: l.id, outcome: "failed" });
        expect(results[0].reason).toMatch(/\S/);
        expect(archivedCalls).toBe(0);
        await sleep(200);
        expect(
          await fx
            .originOf(dlq)
            .read()
            .then((as) => as.filter((a) => a.headers[REDRIVE_HEADERS.replayId] === markers.replayId)),
        ).toHaveLength(0);
      }
      await expectWaiting(dlq, ["locked"]);
    });

    it("a failing archive leaves the original in the DLQ, and says the copy was published", async () => {
      const dlq = await fx.createDlq([{ body: text("archive-fails"), messageId: `af-${randomUUID()}` }]);
      const [l] = await browseAll(dlq);
      const { req, markers } = repairOf(l, { kind: "origin" }, { body: text("archive-fails (repaired)") });
      const results = await run(dlq, [req], async () => {
        throw new Error("archive is down");
      });
      expect(results[0]).toMatchObject({ letterId: l.id, outcome: "failed" });
      expect(results[0].reason).toMatch(/publish/i);
      expect(results[0].reason).not.toContain("archive is down");
      // A duplicate, never a loss: the copy is at the origin and the original still in the DLQ.
      expect(await arrivedWith(fx.originOf(dlq), markers.replayId)).toHaveLength(1);
      await expectWaiting(dlq, ["archive-fails"]);
    });

    it("a target that rejects leaves the original in place with the reason, and archives nothing", async () => {
      const dlq = await fx.createDlq([{ body: text("no-target"), messageId: `nt-${randomUUID()}` }]);
      const [l] = await browseAll(dlq);
      const { req } = repairOf(
        l,
        { kind: "queue", name: `dlq-console-missing-${randomUUID().slice(0, 8)}` },
        { body: text("no-target (repaired)") },
      );
      let archivedCalls = 0;
      let results: Awaited<ReturnType<typeof run>> = [];
      try {
        results = await run(dlq, [req], async () => {
          archivedCalls++;
        });
        expect(results[0]).toMatchObject({ letterId: l.id, outcome: "failed" });
        expect(results[0].reason).toMatch(/\S/);
      } catch (e) {
        // A typed error before anything moved is as good as "failed" (as in the redrive contract).
        expect((e as { code?: string }).code ?? String(e)).toMatch(/not_found|unavailable|bad_request/);
      }
      expect(archivedCalls).toBe(0);
      await expectWaiting(dlq, ["no-target"]);
    });

    it("will not repair without an archive hook: refused before anything is read", async () => {
      const dlq = await fx.createDlq([{ body: text("no-hook"), messageId: `nh-${randomUUID()}` }]);
      const [l] = await browseAll(dlq);
      const { req } = repairOf(l, { kind: "origin" }, { body: text("no-hook (repaired)") });
      await expect(collectMoves(fx.adapter.moveLetters(dlq, [req], { ...ro }))).rejects.toMatchObject({
        code: expect.stringMatching(/^bad_request:/),
      });
      await expectWaiting(dlq, ["no-hook"]);
    });
  });
}
