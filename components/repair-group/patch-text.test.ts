import { describe, expect, it } from "vitest";
import { firstJsonError, lineColumn, readPatch } from "./patch-text";

describe("firstJsonError", () => {
  it("accepts what JSON.parse accepts", () => {
    for (const t of ['{"a":[1,-2.5e3,true,false,null,"x\\u00e9\\n"]}', " [ ] ", '"s"', "0", '{"a":{"b":{}}}']) {
      expect(firstJsonError(t), t).toBeNull();
      expect(() => JSON.parse(t)).not.toThrow();
    }
  });

  it("finds where the text stops being JSON", () => {
    const broken = '[\n  {"op": "replace", "path": "/status" "value": "PAID"}\n]';
    const err = firstJsonError(broken)!;
    expect(lineColumn(broken, err.offset)).toEqual({ line: 2, column: 39 });
    expect(err.message).toMatch(/','/);
    expect(firstJsonError('{"a": 1,}')?.offset).toBe(8);
    expect(firstJsonError("[1, 2")?.offset).toBe(5);
    expect(firstJsonError("{'a': 1}")?.offset).toBe(1);
    expect(firstJsonError('"open')?.offset).toBe(5);
    expect(firstJsonError("01")?.offset).toBe(1);
    expect(firstJsonError("[1] x")?.offset).toBe(4);
  });

  it("rejects whatever JSON.parse rejects on a few hostile inputs", () => {
    for (const t of ["", "-", "[01]", '"\\x"', '"a\nb"', "tru", "nul", "{]", "[,]", "1.", ".5"]) {
      expect(firstJsonError(t), JSON.stringify(t)).not.toBeNull();
      expect(() => JSON.parse(t), JSON.stringify(t)).toThrow();
    }
  });
});

describe("readPatch", () => {
  it("reads a JSON Patch and a merge patch", () => {
    expect(readPatch("json-patch", '[{"op":"replace","path":"/status","value":"PAID"}]')).toEqual({
      ok: true,
      patch: { kind: "json-patch", operations: [{ op: "replace", path: "/status", value: "PAID" }] },
    });
    expect(readPatch("merge-patch", '{"status":"PAID","note":null}')).toEqual({ ok: true, patch: { kind: "merge-patch", patch: { status: "PAID", note: null } } });
  });

  it("names the line and column of a syntax error", () => {
    const r = readPatch("json-patch", '[\n {"op":"test" "path":"/a"}\n]');
    expect(r).toMatchObject({ ok: false, line: 2, column: 15 });
    if (!r.ok) expect(r.message).toContain("line 2, column 15");
  });

  it("refuses a JSON Patch that is not a list of operations", () => {
    expect(readPatch("json-patch", '{"op":"add"}').ok).toBe(false);
    expect(readPatch("json-patch", "[]").ok).toBe(false);
    expect(readPatch("json-patch", '[{"path":"/a"}]')).toMatchObject({ ok: false, message: expect.stringContaining("Operation 1") });
    expect(readPatch("merge-patch", "  ").ok).toBe(false);
  });
});
