import { describe, expect, it } from "vitest";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import type { MaskingRule } from "@/lib/masking/types";
import { applyPatch, headerDiff, jsonDiff, mergePatch, payloadDiff, textHunk } from "./diff";
import { parseLossless } from "./json-lossless";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const str = (name: string, v: string): HeaderEntry => ({ name, value: { t: "string", v } });

const hidePassword: MaskingRule = {
  id: "pw",
  description: "",
  enabled: true,
  target: { kind: "field", paths: ["password"] },
  action: { kind: "hide" },
  roles: ["operator"],
};
const hashEmails: MaskingRule = {
  id: "mail",
  description: "",
  enabled: true,
  target: { kind: "detector", detector: "email" },
  action: { kind: "hash" },
  roles: ["operator"],
};
const hideToken: MaskingRule = {
  id: "tok",
  description: "",
  enabled: true,
  target: { kind: "header", names: ["*token*"] },
  action: { kind: "hide" },
  roles: ["operator"],
};
const mask = { rules: [hidePassword, hashEmails, hideToken], hashKey: "test-key" };

describe("lossless JSON", () => {
  it("keeps number tokens that JSON.parse would round or rewrite", () => {
    const text = '{"id":12345678901234567891,"amount":10.50,"e":1E3,"n":-0,"plain":42,"s":"12345678901234567891"}';
    const doc = parseLossless(text);
    expect(doc.stringify(doc.value)).toBe(text);
    expect((doc.value as Record<string, unknown>).plain).toBe(42);
    expect((doc.value as Record<string, unknown>).s).toBe("12345678901234567891");
  });
});

describe("JSON diff", () => {
  it("lists added, removed and changed values by JSON Pointer", () => {
    const d = jsonDiff(
      enc('{"status":"PAYED","items":[{"sku":"a"}],"old":true,"a/b":1}'),
      enc('{"status":"PAID","items":[{"sku":"a"},{"sku":"b"}],"a/b":2}'),
    )!;
    expect(d.truncated).toBe(false);
    expect(d.entries).toEqual(
      expect.arrayContaining([
        { op: "change", path: "/status", before: '"PAYED"', after: '"PAID"' },
        { op: "add", path: "/items/1", after: '{"sku":"b"}' },
        { op: "remove", path: "/old", before: "true" },
        { op: "change", path: "/a~1b", before: "1", after: "2" },
      ]),
    );
    expect(d.entries).toHaveLength(4);
  });

  it("sees a change to a 64-bit id that doubles cannot tell apart", () => {
    const d = jsonDiff(enc('{"id":12345678901234567891}'), enc('{"id":12345678901234567892}'))!;
    expect(d.entries).toEqual([
      { op: "change", path: "/id", before: "12345678901234567891", after: "12345678901234567892" },
    ]);
  });

  it("reports a changed root as one entry", () => {
    expect(jsonDiff(enc("[1]"), enc('{"a":1}'))!.entries).toEqual([
      { op: "change", path: "", before: "[1]", after: '{"a":1}' },
    ]);
  });

  it("masks a masked field's old and new values, but still shows that it changed", () => {
    const before = enc('{"user":{"password":"hunter2","email":"ann@example.com"},"n":1}');
    const after = enc('{"user":{"password":"correct horse","email":"bob@example.com"},"n":2}');
    const d = jsonDiff(before, after, mask)!;
    const text = JSON.stringify(d);
    for (const secret of ["hunter2", "correct horse", "ann@example.com", "bob@example.com"])
      expect(text).not.toContain(secret);
    expect(d.entries).toContainEqual({
      op: "change",
      path: "/user/password",
      before: '"[hidden]"',
      after: '"[hidden]"',
      masked: true,
    });
    const email = d.entries.find((e) => e.path === "/user/email")!;
    expect(email.masked).toBe(true);
    expect(email.before).not.toBe(email.after); // keyed hashes differ: the change is visible
    expect(d.entries).toContainEqual({ op: "change", path: "/n", before: "1", after: "2" });
  });

  it("masks a whole added subtree that holds a masked field", () => {
    const d = jsonDiff(enc("{}"), enc('{"login":{"password":"pw1","user":"ann"}}'), mask)!;
    expect(JSON.stringify(d)).not.toContain("pw1");
    expect(d.entries[0]).toMatchObject({ op: "add", path: "/login", masked: true });
    expect(d.entries[0].after).toContain("ann");
  });

  it("is bounded: at most 200 entries, and says when it cut", () => {
    const many = (v: number) =>
      enc(JSON.stringify(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, v]))));
    const d = jsonDiff(many(1), many(2))!;
    expect(d.entries).toHaveLength(200);
    expect(d.truncated).toBe(true);
  });
});

describe("payload diff", () => {
  it("says unchanged when the body is kept", () => {
    expect(payloadDiff(enc("x"), null, "text")).toEqual({ kind: "unchanged", size: 1 });
  });

  it("shows the changed lines of a text, masked", () => {
    const d = payloadDiff(
      enc("line 1\nmail ann@example.com\nline 3"),
      enc("line 1\nmail bob@example.com\nline 3"),
      "text",
      mask,
    );
    expect(d).toMatchObject({ kind: "text", masked: true, hunk: { line: 2 } });
    expect(JSON.stringify(d)).not.toMatch(/ann@|bob@/);
    expect(textHunk("a\nb\nc", "a\nB\nc")).toEqual({ line: 2, before: "b", after: "B" });
  });

  it("gives sizes only for a binary payload", () => {
    expect(payloadDiff(Uint8Array.from([0, 0xff]), Uint8Array.from([0, 0xfe, 1]), "binary")).toEqual({
      kind: "binary",
      beforeSize: 2,
      afterSize: 3,
    });
  });
});

describe("header diff", () => {
  it("lists set, added and removed headers, masking values a header rule covers", () => {
    const headers = [str("x-tenant", "acme"), str("x-auth-token", "s3cr3t"), str("x-debug", "1")];
    const d = headerDiff(
      headers,
      { setHeaders: { "x-tenant": "acme-eu", "x-auth-token": "n3w", "x-new": "v" }, removeHeaders: ["x-debug"] },
      mask,
    );
    expect(d).toEqual([
      { name: "x-tenant", op: "change", before: "acme", after: "acme-eu" },
      { name: "x-auth-token", op: "change", before: "[hidden]", after: "[hidden]", masked: true },
      { name: "x-new", op: "add", after: "v" },
      { name: "x-debug", op: "remove", before: "1" },
    ]);
  });

  it("leaves out a header set to the value it already has", () => {
    expect(headerDiff([str("x-a", "1")], { setHeaders: { "x-a": "1" } })).toEqual([]);
  });
});

describe("applyPatch", () => {
  const doc = enc('{"id":12345678901234567891,"status":"PAYED","amount":10.50,"items":[1,2]}');

  it("applies an RFC 6902 patch and keeps untouched numbers exactly", () => {
    const r = applyPatch(doc, {
      kind: "json-patch",
      operations: [
        { op: "test", path: "/status", value: "PAYED" },
        { op: "replace", path: "/status", value: "PAID" },
        { op: "add", path: "/items/-", value: 3 },
      ],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(dec(r.bytes)).toBe('{"id":12345678901234567891,"status":"PAID","amount":10.50,"items":[1,2,3]}');
    expect(r.changed).toBe(true);
  });

  it("keeps the original's indentation", () => {
    const pretty = enc('{\n    "a": 1,\n    "b": [\n        true\n    ]\n}');
    const r = applyPatch(pretty, { kind: "json-patch", operations: [{ op: "replace", path: "/a", value: 2 }] });
    expect(r.ok && dec(r.bytes)).toBe('{\n    "a": 2,\n    "b": [\n        true\n    ]\n}');
  });

  it("gives a per-letter reason when the patch does not apply, and changes nothing", () => {
    const r = applyPatch(doc, {
      kind: "json-patch",
      operations: [
        { op: "test", path: "/status", value: "NEW" },
        { op: "replace", path: "/status", value: "PAID" },
      ],
    });
    expect(r).toEqual({
      ok: false,
      reason: expect.stringMatching(/operation 1 \(test \/status\).*test does not match/),
    });
    expect(
      applyPatch(doc, { kind: "json-patch", operations: [{ op: "replace", path: "/missing/x", value: 1 }] }),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/does not exist/) });
    expect(applyPatch(enc("not json"), { kind: "json-patch", operations: [] })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not JSON/),
    });
    expect(applyPatch(Uint8Array.from([0xff]), { kind: "merge-patch", patch: {} })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not UTF-8/),
    });
  });

  it("refuses a JSON Patch that reaches for an object's prototype", () => {
    const r = applyPatch(enc("{}"), {
      kind: "json-patch",
      operations: [{ op: "add", path: "/__proto__/polluted", value: true }],
    });
    expect(r.ok).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("applies an RFC 7396 merge patch: null removes, objects merge, anything else replaces", () => {
    const r = applyPatch(doc, { kind: "merge-patch", patch: { status: "PAID", amount: null, meta: { by: "ops" } } });
    expect(r.ok && dec(r.bytes)).toBe('{"id":12345678901234567891,"status":"PAID","items":[1,2],"meta":{"by":"ops"}}');
    // The RFC's own examples (appendix A), a few of them.
    expect(mergePatch({ a: "b" }, { a: "c" })).toEqual({ a: "c" });
    expect(mergePatch({ a: ["b"] }, { a: "c" })).toEqual({ a: "c" });
    expect(mergePatch({ a: { b: "c" } }, { a: { b: "d", c: null } })).toEqual({ a: { b: "d" } });
    expect(mergePatch(["a", "b"], ["c", "d"])).toEqual(["c", "d"]);
    expect(mergePatch({ e: null }, { a: 1 })).toEqual({ e: null, a: 1 });
  });

  it("treats a merge patch's __proto__ key as data", () => {
    const r = applyPatch(enc("{}"), { kind: "merge-patch", patch: JSON.parse('{"__proto__":{"polluted":true}}') });
    expect(r.ok && dec(r.bytes)).toBe('{"__proto__":{"polluted":true}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("says when a patch changed nothing", () => {
    const r = applyPatch(doc, { kind: "merge-patch", patch: { status: "PAYED" } });
    expect(r).toMatchObject({ ok: true, changed: false });
  });
});
