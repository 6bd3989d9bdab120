import { describe, expect, it } from "vitest";
import { DEFAULT_MASKING_RULES } from "@/lib/masking/defaults";
import { rulesFor } from "@/lib/masking/engine";
import { headerDiff, headerSecrets, payloadDiff, secretsOf } from "./diff";
import { maskedPatchDiff, patchNamesMasked, tryPatchMasked } from "./masked-patch";
import { applyPatch, type PayloadPatch } from "./patch";

/**
 * A patch tried on a payload as a role sees it, with the default masking rules as an
 * admin has them (admins see payloads masked until they reveal): the answer never differs between a
 * right and a wrong guess of a masked value, a value copied or moved from a masked place stays
 * masked, and a patch that tests or changes a masked value is refused.
 */
const enc = (s: string) => new TextEncoder().encode(s);
const mask = { rules: rulesFor(DEFAULT_MASKING_RULES, "admin"), hashKey: "unit-test-key" };
const CARD = "4111111111111111";
const CVV = "737";
const letter = enc(
  JSON.stringify({
    order: 7,
    id: "ID",
    note: "call back",
    customer: { name: "Ann", card: { number: CARD, cvv: CVV, brand: "visa" } },
    items: [{ sku: "a" }, { sku: "b" }],
  }).replace('"ID"', "12345678901234567891"),
);
const ops = (...operations: Array<Record<string, unknown>>): PayloadPatch => ({ kind: "json-patch", operations });
const text = (v: unknown) => JSON.stringify(v);

describe("a patch on a payload as the role sees it", () => {
  it("shows a value copied from a masked field masked where it lands (the CVV copied into a note)", () => {
    const r = tryPatchMasked(letter, ops({ op: "copy", from: "/customer/card/cvv", path: "/note" }), mask, true);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(text(r.diff)).not.toContain(CVV);
    expect(r.diff).toEqual({
      kind: "json",
      truncated: false,
      entries: [{ op: "change", path: "/note", before: '"call back"', after: '"[hidden]"', masked: true }],
    });
    expect(r.unchanged).toBe(false);
  });

  it("keeps a moved or copied card number as the role saw it (last 4), and a copied object's masked members masked", () => {
    const moved = tryPatchMasked(letter, ops({ op: "move", from: "/customer/card/number", path: "/ref" }), mask, true);
    expect(moved.ok && text(moved.diff)).not.toContain(CARD);
    expect(moved.ok && moved.diff?.kind === "json" && moved.diff.entries).toEqual(
      expect.arrayContaining([
        { op: "add", path: "/ref", after: '"****1111"', masked: true },
        { op: "remove", path: "/customer/card/number", before: '"****1111"', masked: true },
      ]),
    );
    const copied = tryPatchMasked(letter, ops({ op: "copy", from: "/customer/card", path: "/backup" }), mask, true);
    expect(copied.ok).toBe(true);
    expect(text(copied)).not.toContain(CARD);
    expect(text(copied)).not.toContain(`"${CVV}"`);
    expect(text(copied)).toContain("visa");
  });

  it("refuses a test of a masked value with the same answer for a right and a wrong guess", () => {
    for (const path of ["/customer/card/number", "/customer/card/cvv", "/customer/card", "/customer", ""]) {
      const right = tryPatchMasked(
        letter,
        ops({ op: "test", path, value: path.endsWith("cvv") ? CVV : CARD }),
        mask,
        true,
      );
      const wrong = tryPatchMasked(letter, ops({ op: "test", path, value: "4000000000000002" }), mask, true);
      expect(right, path).toEqual(wrong);
      expect(right).toMatchObject({ ok: false, masked: true });
      expect(!right.ok && right.reason).toContain("compares a value that masking hides from your role");
    }
  });

  it("refuses writing over, removing or reaching into a masked value, whatever is written", () => {
    const cases: Array<[PayloadPatch, RegExp]> = [
      [ops({ op: "replace", path: "/customer/card/cvv", value: CVV }), /change or remove/],
      [ops({ op: "add", path: "/customer/card/cvv", value: CVV }), /change or remove/],
      [ops({ op: "remove", path: "/customer/card/cvv" }), /change or remove/],
      [ops({ op: "replace", path: "/customer", value: {} }), /change or remove/],
      [ops({ op: "copy", from: "/note", path: "/customer/card/number" }), /change or remove/],
      [
        { kind: "merge-patch", patch: { customer: { card: { cvv: CVV } } } },
        /merge patch would change or remove \/customer\/card\/cvv/,
      ],
      [{ kind: "merge-patch", patch: { customer: null } }, /\/customer/],
    ];
    for (const [patch, why] of cases) {
      const r = tryPatchMasked(letter, patch, mask, true);
      expect(r, JSON.stringify(patch)).toMatchObject({ ok: false, masked: true });
      expect(!r.ok && r.reason).toMatch(why);
    }
    // A wrong value gets the very same answer as the right one.
    const right = tryPatchMasked(letter, ops({ op: "replace", path: "/customer/card/cvv", value: CVV }), mask, true);
    const wrong = tryPatchMasked(letter, ops({ op: "replace", path: "/customer/card/cvv", value: "000" }), mask, true);
    expect(right).toEqual(wrong);
  });

  it("follows a masked value through the patch: a test of where it was moved is refused too", () => {
    const r = tryPatchMasked(
      letter,
      ops({ op: "move", from: "/customer/card/cvv", path: "/x" }, { op: "test", path: "/x", value: CVV }),
      mask,
      true,
    );
    expect(r).toMatchObject({ ok: false, masked: true });
    expect(!r.ok && r.reason).toMatch(/^Operation 2 \(test \/x\)/);
  });

  it("refuses reading inside a value masked whole (a hidden object's members are not there to see)", () => {
    const whole = enc(JSON.stringify({ credentials: { user: "ann", secret: "s3cr3t" }, n: 1 }));
    const r = tryPatchMasked(whole, ops({ op: "copy", from: "/credentials/user", path: "/who" }), mask, true);
    expect(r).toMatchObject({ ok: false, masked: true });
    expect(!r.ok && r.reason).toMatch(/reads inside a value that masking hides whole/);
  });

  it("tests a card number found by a detector in free text the same way as a masked field", () => {
    const free = enc(JSON.stringify({ memo: `paid with ${CARD}`, n: 1 }));
    const right = tryPatchMasked(free, ops({ op: "test", path: "/memo", value: `paid with ${CARD}` }), mask, true);
    const wrong = tryPatchMasked(
      free,
      ops({ op: "test", path: "/memo", value: "paid with 4000000000000002" }),
      mask,
      true,
    );
    expect(right).toEqual(wrong);
    expect(right).toMatchObject({ ok: false, masked: true });
  });

  it("answers from what the role sees where nothing masked is touched: tests, reasons, diffs, exact numbers", () => {
    const ok = tryPatchMasked(
      letter,
      ops({ op: "test", path: "/order", value: 7 }, { op: "replace", path: "/note", value: "done" }),
      mask,
      true,
    );
    expect(ok).toEqual({
      ok: true,
      unchanged: false,
      diff: {
        kind: "json",
        truncated: false,
        entries: [{ op: "change", path: "/note", before: '"call back"', after: '"done"' }],
      },
    });
    const no = tryPatchMasked(letter, ops({ op: "test", path: "/order", value: 8 }), mask, true);
    expect(no).toEqual({
      ok: false,
      reason: "The patch does not apply: operation 1 (test /order): its test does not match this letter.",
    });
    const missing = tryPatchMasked(letter, ops({ op: "remove", path: "/nope" }), mask, true);
    expect(missing).toMatchObject({ ok: false, reason: expect.stringMatching(/path does not exist/) });
    const same = tryPatchMasked(letter, ops({ op: "test", path: "/order", value: 7 }), mask, true);
    expect(same).toEqual({ ok: true, unchanged: true, diff: { kind: "unchanged", size: letter.length } });
    const id = tryPatchMasked(letter, ops({ op: "copy", from: "/id", path: "/id2" }), mask, true);
    expect(id.ok && id.diff).toMatchObject({ entries: [{ op: "add", path: "/id2", after: "12345678901234567891" }] });
  });

  it("masks a value the patch writes where a rule masks it, and a card number typed into a note", () => {
    const r = tryPatchMasked(
      letter,
      ops({ op: "add", path: "/password", value: "hunter2" }, { op: "replace", path: "/note", value: `card ${CARD}` }),
      mask,
      true,
    );
    expect(r.ok).toBe(true);
    expect(text(r)).not.toContain("hunter2");
    expect(text(r)).not.toContain(CARD);
  });

  it("refuses a patch that names a field by a name masking hides, whatever the letters hold", () => {
    // Whether a letter has a field named after an e-mail address is hidden: naming one is a guess.
    const right = patchNamesMasked(ops({ op: "remove", path: "/contacts/ann@example.com" }), mask);
    const wrong = patchNamesMasked(ops({ op: "remove", path: "/contacts/bob@example.com" }), mask);
    expect(right).toBe("Operation 1 (remove) names a field in its path whose name masking hides from your role.");
    expect(wrong).toBe(right);
    expect(patchNamesMasked({ kind: "merge-patch", patch: { contacts: { [CARD]: null } } }, mask)).toMatch(
      /^The merge patch names a field \(at \/contacts\)/,
    );
    expect(patchNamesMasked(ops({ op: "copy", from: "/customer/card/cvv", path: "/note" }), mask)).toBeNull();
    expect(patchNamesMasked(ops({ op: "remove", path: "/contacts/ann@example.com" }), null)).toBeNull();
  });

  it("without rules, the payload as it is", () => {
    const r = tryPatchMasked(letter, ops({ op: "copy", from: "/customer/card/cvv", path: "/note" }), null, true);
    expect(r.ok && r.diff).toMatchObject({ entries: [{ op: "change", path: "/note", after: `"${CVV}"` }] });
  });

  it("does not apply to a payload that is not JSON, with the reason", () => {
    expect(tryPatchMasked(enc("not json"), ops({ op: "remove", path: "/a" }), mask, true)).toEqual({
      ok: false,
      reason: "The payload is not JSON, so a JSON patch cannot apply to it.",
    });
  });
});

describe("the diff of a patch already applied (audit rows)", () => {
  it("masks by provenance, following the bytes a patch produced", () => {
    const patch = ops({ op: "copy", from: "/customer/card/cvv", path: "/note" });
    const after = applyPatch(letter, patch);
    expect(after.ok).toBe(true);
    if (!after.ok) return;
    expect(text(after.bytes)).not.toBe("");
    // The bytes remember the patch: payloadDiff masks them as the patch moved the values.
    const d = payloadDiff(letter, after.bytes, "json", mask);
    expect(text(d)).not.toContain(CVV);
    expect(d).toEqual(maskedPatchDiff(letter, patch, mask));
    // A test the real payload passed is not asked again of the masked one.
    const tested = maskedPatchDiff(
      letter,
      ops(
        { op: "test", path: "/customer/card/cvv", value: CVV },
        { op: "copy", from: "/customer/card/cvv", path: "/c" },
      ),
      mask,
    );
    expect(tested).toMatchObject({
      kind: "json",
      entries: [{ op: "add", path: "/c", after: '"[hidden]"', masked: true }],
    });
  });
});

describe("a hand edit's diff after a reveal", () => {
  it("hides a new value that holds a masked one, in the payload and in a header", () => {
    const before = enc(JSON.stringify({ note: "x", card: { cvv: CVV } }));
    const edited = enc(JSON.stringify({ note: `cvv was ${CVV}`, card: { cvv: CVV } }));
    const secrets = secretsOf(before, "json", mask);
    const d = payloadDiff(before, edited, "json", mask, { secrets });
    expect(text(d)).not.toContain(CVV);
    expect(d).toMatchObject({ entries: [{ op: "change", path: "/note", masked: true }] });
    const headers = [{ name: "authorization", value: { t: "string" as const, v: "Bearer abcdefghijklmnop" } }];
    const all = headerSecrets(headers, mask);
    all.absorb(secrets);
    const h = headerDiff(
      headers,
      { setHeaders: { "x-note": `copied ${CVV}`, "x-auth": "Bearer abcdefghijklmnop" } },
      mask,
      all,
    );
    expect(text(h)).not.toContain(CVV);
    expect(text(h)).not.toContain("abcdefghijklmnop");
  });
});
