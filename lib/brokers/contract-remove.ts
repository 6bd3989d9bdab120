/**
 * The discard contract (`removeLetters`) and its undo (`republish`), run by every adapter against
 * its real broker with the same fixture as the redrive contract (contract-redrive.ts). It holds
 * adapters to DESIGN.md's conservation rule for discards: a letter leaves the DLQ only after its
 * complete copy was handed to `beforeRemove` and that resolved; a checksum mismatch or a throwing
 * `beforeRemove` leaves it where it was; letters not requested are untouched and keep their order;
 * undo puts back the same bytes, ids and headers. Nothing here branches on broker kind.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import { sha256Hex } from "@/lib/brokers/display";
import { collect, type RedriveContractFixture, type RedriveLetterInput } from "@/lib/brokers/contract-redrive";

/** What the discard contract needs of a redrive contract fixture. */
export type RemoveContractFixture = Pick<
  RedriveContractFixture,
  "adapter" | "createDlq" | "cleanup" | "removesFromDlq" | "readOptions" | "settleMs"
>;
import {
  BrokerError,
  type Letter,
  type LetterCopy,
  type RemoveResult,
  type RepublishResult,
} from "@/lib/brokers/types";

const text = (s: string) => new TextEncoder().encode(s);
const bodyText = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function runRemoveContract(name: string, factory: () => Promise<RemoveContractFixture>) {
  describe(`discard contract: ${name}`, () => {
    let fx: RemoveContractFixture;
    let ro: { acceptRisk?: boolean };
    const ordered = () => fx.adapter.capabilities.stableOrder !== false;

    beforeAll(async () => {
      fx = await factory();
      ro = fx.readOptions ?? {};
    });
    afterAll(async () => {
      await fx?.cleanup();
    });

    const browseAll = async (dlq: string) => (await fx.adapter.browse(dlq, { offset: 0, limit: 1000, ...ro })).letters;
    /** Letters still waiting in the DLQ: present and not handled (Kafka keeps handled records in the log). */
    const waiting = async (dlq: string) => (await browseAll(dlq)).filter((l) => !l.handled);
    async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
      const end = Date.now() + (fx.settleMs ?? 15_000);
      for (;;) {
        const v = await read();
        if (done(v) || Date.now() > end) return v;
        await sleep(100);
      }
    }
    const waitingBodies = async (dlq: string, n: number) =>
      (
        await until(
          () => waiting(dlq),
          (ls) => ls.length === n,
        )
      ).map((l) => bodyText(l.body));
    const expectBodies = (got: string[], want: string[]) =>
      ordered() ? expect(got).toEqual(want) : expect([...got].sort()).toEqual([...want].sort());

    /** Removes, archiving every copy handed over in a list (or refusing with `refuse`). */
    async function remove(
      dlq: string,
      letters: Array<Pick<Letter, "id" | "sha256">>,
      refuse?: (copy: LetterCopy) => Error | null,
    ) {
      const copies: LetterCopy[] = [];
      const results = await collect<RemoveResult>(
        fx.adapter.removeLetters(
          dlq,
          letters.map((l) => ({ letterId: l.id, sha256: l.sha256 })),
          {
            ...ro,
            operationId: randomUUID(),
            beforeRemove: async (copy) => {
              const e = refuse?.(copy);
              if (e) throw e;
              copies.push(copy);
            },
          },
        ),
      );
      return { results, by: new Map(results.map((r) => [r.letterId, r])), copies };
    }

    it("removes 2 of 5 after handing over complete copies; the other 3 stay in order; a letter asked for again is missing", async () => {
      const bodies = ["discard-0", "discard-1", "discard-2 \r\n\t Ünïcödé", "discard-3", "discard-4"];
      const dlq = await fx.createDlq(
        bodies.map((b, i) => ({
          body: text(b),
          messageId: `discard-msg-${i}-${randomUUID()}`,
          headers: { "x-app": `app-${i}` },
        })),
      );
      const before = await until(
        () => waiting(dlq),
        (ls) => ls.length === 5,
      );
      expect(before).toHaveLength(5);
      const chosen = [before[1], before[3]];

      const { results, by, copies } = await remove(dlq, chosen);
      expect(results).toHaveLength(2);
      for (const l of chosen)
        expect(by.get(l.id), JSON.stringify(by.get(l.id))).toMatchObject({ outcome: "removed", reason: null });
      // The copies: every byte of the body, the same id and checksum, headers, an envelope.
      expect(copies.map((c) => c.letterId).sort()).toEqual(chosen.map((l) => l.id).sort());
      for (const c of copies) {
        const l = chosen.find((x) => x.id === c.letterId)!;
        expect(c.letter.id).toBe(l.id);
        expect(c.letter.bodyTruncated).toBe(false);
        expect(sha256Hex(c.letter.body)).toBe(l.sha256);
        expect(c.letter.sha256).toBe(l.sha256);
        expect(c.letter.messageId).toBe(l.messageId);
        expect(c.letter.headers).toEqual(l.headers);
        expect(c.envelope.byteLength).toBeGreaterThan(0);
      }

      expectBodies(await waitingBodies(dlq, 3), [bodies[0], bodies[2], bodies[4]]);
      const after = await waiting(dlq);
      expect(after.map((l) => l.id).sort()).toEqual([before[0], before[2], before[4]].map((l) => l.id).sort());
      if (!fx.removesFromDlq)
        expect(
          (await browseAll(dlq))
            .filter((l) => l.handled?.outcome === "discarded")
            .map((l) => l.id)
            .sort(),
        ).toEqual(chosen.map((l) => l.id).sort());

      // Removed letters are gone: asked for again, they are missing and nothing else moves.
      const again = await remove(dlq, [chosen[0]]);
      expect(again.results).toEqual([expect.objectContaining({ letterId: chosen[0].id, outcome: "missing" })]);
      expect(again.results[0].reason).toMatch(/\S/);
      expect(again.copies).toHaveLength(0);
      expectBodies(await waitingBodies(dlq, 3), [bodies[0], bodies[2], bodies[4]]);
    });

    it("a checksum mismatch removes nothing and hands over no copy", async () => {
      const dlq = await fx.createDlq([0, 1].map((i) => ({ body: text(`discard-checksum-${i}`) })));
      const before = await until(
        () => waiting(dlq),
        (ls) => ls.length === 2,
      );
      const { results, copies } = await remove(dlq, [{ id: before[0].id, sha256: "f".repeat(64) }]);
      expect(results).toEqual([expect.objectContaining({ letterId: before[0].id, outcome: "checksum_mismatch" })]);
      expect(results[0].reason).toMatch(/\S/);
      expect(copies).toHaveLength(0);
      await sleep(300);
      expectBodies(await waitingBodies(dlq, 2), ["discard-checksum-0", "discard-checksum-1"]);
    });

    it("beforeRemove throwing leaves that letter in the DLQ (failed, with the error's operator message); the others go", async () => {
      const dlq = await fx.createDlq([0, 1, 2].map((i) => ({ body: text(`discard-refused-${i}`) })));
      const before = await until(
        () => waiting(dlq),
        (ls) => ls.length === 3,
      );
      const refusedId = before[1].id;
      const { by, copies } = await remove(dlq, before, (c) =>
        c.letterId === refusedId
          ? new AppError("unavailable:database", {
              message: "db down (internal)",
              userMessage: "The archive could not be written.",
            })
          : null,
      );
      expect(by.get(refusedId)).toMatchObject({ outcome: "failed" });
      expect(by.get(refusedId)!.reason).toMatch(/archive could not be written/);
      expect(by.get(refusedId)!.reason).not.toMatch(/internal/);
      expect(by.get(before[0].id)).toMatchObject({ outcome: "removed" });
      expect(by.get(before[2].id)).toMatchObject({ outcome: "removed" });
      expect(copies.map((c) => c.letterId).sort()).toEqual([before[0].id, before[2].id].sort());
      expect(await waitingBodies(dlq, 1)).toEqual(["discard-refused-1"]);
      expect((await waiting(dlq))[0].id).toBe(refusedId);
    });

    it("republish puts discarded letters back byte-identical (body, ids, headers), browsable again", async () => {
      const binary = fx.adapter.capabilities.binaryBodies !== false;
      const inputs: RedriveLetterInput[] = [
        {
          body: binary ? Uint8Array.from([0x00, 0xff, 0xc3, 0x28, 0x7f]) : text("undo-0 💥 Ünïcödé"),
          messageId: `undo-msg-0-${randomUUID()}`,
          headers: { "x-app": "app-0", "x-trace": "t-0" },
        },
        { body: text("undo-1"), messageId: `undo-msg-1-${randomUUID()}`, headers: { "x-app": "app-1" } },
        { body: text("undo-2 stays"), messageId: `undo-msg-2-${randomUUID()}`, headers: { "x-app": "app-2" } },
      ];
      const dlq = await fx.createDlq(inputs);
      const before = await until(
        () => waiting(dlq),
        (ls) => ls.length === 3,
      );
      const { copies } = await remove(dlq, [before[0], before[1]]);
      expect(copies).toHaveLength(2);
      expect(await waitingBodies(dlq, 1)).toEqual(["undo-2 stays"]);

      const results = await collect<RepublishResult>(
        fx.adapter.republish(
          dlq,
          copies.map((c) => ({ id: `archive-${c.letterId}`, envelope: c.envelope, body: c.letter.body })),
        ),
      );
      expect(results.map((r) => r.id).sort()).toEqual(copies.map((c) => `archive-${c.letterId}`).sort());
      for (const r of results) {
        expect(r, JSON.stringify(r)).toMatchObject({ outcome: "published", reason: null });
        expect(["published", "restored"]).toContain(r.how);
      }

      const back = await until(
        () => waiting(dlq),
        (ls) => ls.length === 3,
      );
      expect(back).toHaveLength(3);
      for (const c of copies) {
        const found = back.filter((l) => l.sha256 === c.letter.sha256);
        expect(found, `letter ${c.letterId} is back once`).toHaveLength(1);
        const l = found[0];
        expect(Buffer.from(l.body).equals(Buffer.from(c.letter.body))).toBe(true);
        expect(l.headers).toEqual(c.letter.headers);
        expect(l.correlationId).toBe(c.letter.correlationId);
        if (fx.adapter.capabilities.producerMessageIds !== false) {
          expect(l.messageId).toBe(c.letter.messageId);
          expect(l.id).toBe(c.letterId);
        }
        const r = results.find((x) => x.id === `archive-${c.letterId}`)!;
        if (r.letterId !== null) expect(l.id).toBe(r.letterId);
      }
    });

    it("republish refuses an envelope whose body does not match, and publishes nothing", async () => {
      const dlq = await fx.createDlq([{ body: text("undo-tampered") }]);
      const before = await until(
        () => waiting(dlq),
        (ls) => ls.length === 1,
      );
      const { copies } = await remove(dlq, before);
      expect(copies).toHaveLength(1);
      const results = await collect<RepublishResult>(
        fx.adapter.republish(dlq, [{ id: "a1", envelope: copies[0].envelope, body: text("undo-tamperEd") }]),
      );
      expect(results).toEqual([expect.objectContaining({ id: "a1", outcome: "failed", how: null })]);
      expect(results[0].reason).toMatch(/checksum/);
      await sleep(300);
      expect(await waiting(dlq)).toHaveLength(0);
    });

    it("a DLQ that does not exist: a typed not_found error from both, before anything happens", async () => {
      const missing = `no-such-dlq-${randomUUID().slice(0, 8)}`;
      let called = false;
      const err = await collect(
        fx.adapter.removeLetters(missing, [{ letterId: "x", sha256: "0".repeat(64) }], {
          ...ro,
          operationId: randomUUID(),
          beforeRemove: async () => {
            called = true;
          },
        }),
      ).catch((e) => e);
      expect(err).toBeInstanceOf(BrokerError);
      expect((err as BrokerError).kind).toBe("not_found");
      expect(called).toBe(false);
      const err2 = await collect(
        fx.adapter.republish(missing, [{ id: "a", envelope: text("{}"), body: text("x") }]),
      ).catch((e) => e);
      expect(err2).toBeInstanceOf(BrokerError);
      expect((err2 as BrokerError).kind).toBe("not_found");
    });
  });
}
