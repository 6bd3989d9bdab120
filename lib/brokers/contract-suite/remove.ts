/**
 * The discard contract (`removeLetters`) and its undo (`republish`), run by every adapter against
 * its real broker with the same fixture as the redrive contract (contract-redrive.ts). It holds
 * adapters to DESIGN.md's conservation rule for discards: a letter leaves the DLQ only after its
 * complete copy was handed to `beforeRemove` and that resolved; a checksum mismatch or a throwing
 * `beforeRemove` leaves it where it was; letters not requested are untouched and keep their order;
 * undo puts back the same bytes, ids and headers; and the shared move rules (repeats, checksum case,
 * twins, letters taken away or arriving while the call runs) as in the redrive contract. Nothing here
 * branches on broker kind.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import { sha256Hex } from "@/lib/brokers/display";
import {
  collect,
  expectMissingReason,
  type RedriveContractFixture,
  type RedriveLetterInput,
} from "@/lib/brokers/contract-suite/redrive";

/** What the discard contract needs of a redrive contract fixture. */
export type RemoveContractFixture = Pick<
  RedriveContractFixture,
  | "adapter"
  | "createDlq"
  | "cleanup"
  | "removesFromDlq"
  | "readOptions"
  | "settleMs"
  | "twins"
  | "takeAway"
  | "takeAwayFirstOnly"
  | "deadLetterMore"
>;
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { Letter, LetterCopy } from "@/lib/brokers/contract/letter";
import type { RemoveResult, RepublishResult } from "@/lib/brokers/contract/remove";

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

    /**
     * Removes, archiving every copy handed over in a list (or refusing with `refuse`); `during` runs
     * in `beforeRemove` first, for what happens to the DLQ while the call runs.
     */
    async function remove(
      dlq: string,
      letters: Array<Pick<Letter, "id" | "sha256">>,
      refuse?: (copy: LetterCopy) => Error | null,
      during?: (copy: LetterCopy) => Promise<void>,
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
              await during?.(copy);
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

    // ---- The rules every mover applies the same way (lib/brokers/move-rules.ts), on every broker. ----

    const ids = (ls: Letter[]) => (ordered() ? ls.map((l) => l.id) : ls.map((l) => l.id).sort());
    const bodiesOf = (ls: Array<{ body: Uint8Array }>) => ls.map((l) => bodyText(l.body)).sort();
    const copyBodies = (copies: LetterCopy[]) => bodiesOf(copies.map((c) => c.letter));
    const distinct = async (label: string, n: number) => {
      const dlq = await fx.createDlq(
        Array.from({ length: n }, (_, i) => ({
          body: text(`${label}-${i}`),
          messageId: `${label}-${i}-${randomUUID()}`,
        })),
      );
      const before = await until(
        () => waiting(dlq),
        (ls) => ls.length === n,
      );
      expect(before).toHaveLength(n);
      return { dlq, before };
    };
    /** Nothing of `dlq` waits any more (on brokers that remove, its depth is 0). */
    async function expectNoneWaiting(dlq: string) {
      expect(await waitingBodies(dlq, 0)).toEqual([]);
      if (fx.removesFromDlq)
        expect(
          await until(
            async () => (await fx.adapter.describeDlq(dlq)).depth,
            (d) => d === 0,
          ),
        ).toBe(0);
    }

    it("a letter id asked for twice: one result, removed once (one copy handed over); the others untouched", async () => {
      const { dlq, before } = await distinct("discard-repeat", 3);
      const [picked, ...others] = [before[1], before[0], before[2]];
      // The repeat is dropped whatever it carries, even a checksum that matches nothing.
      const { results, copies } = await remove(dlq, [picked, { id: picked.id, sha256: "f".repeat(64) }]);
      expect(results).toEqual([expect.objectContaining({ letterId: picked.id, outcome: "removed", reason: null })]);
      expect(copies.map((c) => c.letterId)).toEqual([picked.id]);
      expect(Buffer.from(copies[0].letter.body).equals(Buffer.from(picked.body))).toBe(true);
      expectBodies(
        await waitingBodies(dlq, 2),
        others.map((l) => bodyText(l.body)),
      );
      expect(ids(await waiting(dlq))).toEqual(ids(others));
    });

    it("a checksum recorded in upper-case hex removes the letter as in lower case", async () => {
      const { dlq, before } = await distinct("discard-upper", 2);
      const { results, copies } = await remove(dlq, [{ id: before[0].id, sha256: before[0].sha256.toUpperCase() }]);
      expect(results).toEqual([expect.objectContaining({ letterId: before[0].id, outcome: "removed", reason: null })]);
      expect(copies).toHaveLength(1);
      expect(Buffer.from(copies[0].letter.body).equals(Buffer.from(before[0].body))).toBe(true);
      expect(await waitingBodies(dlq, 1)).toEqual([bodyText(before[1].body)]);
      expect(ids(await waiting(dlq))).toEqual([before[1].id]);
    });

    it("twins: two identical letters without ids and a third; the first twin alone, then the second twin (by its first id) and the third: all removed, one copy each, the DLQ empty", async () => {
      const twin = (): RedriveLetterInput => ({ body: text("twin body"), headers: { "x-app": "twin" } });
      const dlq = await fx.createDlq([twin(), twin(), { body: text("not a twin"), headers: { "x-app": "other" } }]);
      const before = await until(
        () => waiting(dlq),
        (ls) => ls.length === 3,
      );
      expect(new Set(before.map((l) => l.id)).size).toBe(3);
      const twins = before.filter((l) => bodyText(l.body) === "twin body");
      const other = before.find((l) => bodyText(l.body) === "not a twin")!;
      expect(twins).toHaveLength(2);

      const one = await remove(dlq, [twins[0]]);
      expect(one.results).toEqual([
        expect.objectContaining({ letterId: twins[0].id, outcome: "removed", reason: null }),
      ]);
      expect(copyBodies(one.copies)).toEqual(["twin body"]);
      await waitingBodies(dlq, 2);
      // Where twins have no identity of their own, the twin left is now listed under the first id.
      const twinLeft = (await waiting(dlq)).find((l) => bodyText(l.body) === "twin body")!;
      expect(twinLeft.id).toBe(fx.twins ? twins[0].id : twins[1].id);

      // Asked for as browse gave them before the first call.
      const two = await remove(dlq, [twins[1], other]);
      expect(two.results.map((r) => r.letterId).sort()).toEqual([twins[1].id, other.id].sort());
      for (const r of two.results) expect(r, JSON.stringify(r)).toMatchObject({ outcome: "removed", reason: null });
      expect(copyBodies(two.copies)).toEqual(["not a twin", "twin body"]);
      await expectNoneWaiting(dlq);
    });

    it("a letter taken away by someone else after it was listed: 'missing' in the shared words, no copy; the others go", async () => {
      const { dlq, before } = await distinct("discard-gone", 3);
      // The DLQ's first letter: the one every broker's own client can take away.
      const gone = before[0];
      expect(await fx.takeAway(dlq, gone), "the fixture took the letter away").toBe(true);
      const { results, by, copies } = await remove(dlq, before);
      expect(results.map((r) => r.letterId).sort()).toEqual(before.map((l) => l.id).sort());
      expect(by.get(gone.id)).toMatchObject({ outcome: "missing" });
      expectMissingReason(by.get(gone.id)!.reason, "discard", dlq);
      for (const l of before.slice(1)) expect(by.get(l.id)).toMatchObject({ outcome: "removed", reason: null });
      expect(copyBodies(copies)).toEqual(bodiesOf(before.slice(1)));
      await expectNoneWaiting(dlq);
    });

    it("a letter taken away by someone else during the discard: 'missing' only without a copy, 'removed' only with one", async () => {
      const { dlq, before } = await distinct("discard-vanish", 3);
      let gone: Letter | null = null;
      let taken: boolean | null = null;
      // While the first copy is archived, another letter of the DLQ is taken away (where only the
      // first letter can be, that one, its copy made or not).
      const { results, by, copies } = await remove(dlq, before, undefined, async (copy) => {
        if (gone) return;
        gone = fx.takeAwayFirstOnly ? before[0] : before.find((l) => l.id !== copy.letterId)!;
        taken = await fx.takeAway(dlq, gone);
      });
      expect(gone, "removeLetters called beforeRemove").not.toBeNull();
      const g = gone as unknown as Letter;
      expect(results.map((r) => r.letterId).sort()).toEqual(before.map((l) => l.id).sort());
      for (const l of before.filter((x) => x.id !== g.id))
        expect(by.get(l.id), JSON.stringify(by.get(l.id))).toMatchObject({ outcome: "removed", reason: null });
      const r = by.get(g.id)!;
      expect(["removed", "missing"], `taken away: ${taken}; ${JSON.stringify(r)}`).toContain(r.outcome);
      expect(copies.filter((c) => c.letterId === g.id)).toHaveLength(r.outcome === "removed" ? 1 : 0);
      if (r.outcome === "missing") expectMissingReason(r.reason, "discard", dlq);
      expect(copies).toHaveLength(r.outcome === "removed" ? 3 : 2);
      await expectNoneWaiting(dlq);
    });

    it("a letter that arrives during the discard is not asked for: it stays after the others, untouched, and is not reported", async () => {
      const { dlq, before } = await distinct("discard-arrive", 3);
      const [a, b, stays] = before;
      let arrived = false;
      const { results, copies } = await remove(dlq, [a, b], undefined, async () => {
        if (arrived) return;
        arrived = true;
        await fx.deadLetterMore(dlq, [{ body: text("arrive-late"), messageId: `arrive-late-${randomUUID()}` }]);
      });
      expect(arrived, "removeLetters called beforeRemove").toBe(true);
      expect(results.map((r) => r.letterId).sort()).toEqual([a.id, b.id].sort());
      for (const r of results) expect(r, JSON.stringify(r)).toMatchObject({ outcome: "removed", reason: null });
      expect(copies.map((c) => c.letterId).sort()).toEqual([a.id, b.id].sort());
      expectBodies(await waitingBodies(dlq, 2), [bodyText(stays.body), "arrive-late"]);
      expect((await waiting(dlq)).some((l) => l.id === stays.id)).toBe(true);
    });
  });
}
