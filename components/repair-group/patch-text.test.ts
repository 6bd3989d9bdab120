import { describe, expect, it } from "vitest";
import { readPatch } from "./patch-text";

describe("readPatch", () => {
  it("reads a JSON Patch and a merge patch", () => {
    expect(readPatch("json-patch", '[{"op":"replace","path":"/status","value":"PAID"}]')).toEqual({
      ok: true,
      patch: { kind: "json-patch", operations: [{ op: "replace", path: "/status", value: "PAID" }] },
    });
    expect(readPatch("merge-patch", '{"status":"PAID","note":null}')).toEqual({
      ok: true,
      patch: { kind: "merge-patch", patch: { status: "PAID", note: null } },
    });
  });

  it("names the line and column of a syntax error", () => {
    const missingComma = readPatch(
      "json-patch",
      '[{"op":"test","path":"/status","value":"PAYED"} {"op":"replace","path":"/status","value":"PAID"}]',
    );
    expect(missingComma).toMatchObject({ ok: false, line: 1, column: 49 });
    expect(readPatch("merge-patch", '{\n  "status": "PAID",\n}')).toMatchObject({ ok: false, line: 3, column: 1 });
    const r = readPatch("json-patch", '[\n {"op":"test" "path":"/a"}\n]');
    expect(r).toMatchObject({ ok: false, line: 2, column: 15 });
    if (!r.ok) expect(r.message).toContain("line 2, column 15");
  });

  it("refuses a JSON Patch that is not a list of operations", () => {
    expect(readPatch("json-patch", '{"op":"add"}').ok).toBe(false);
    expect(readPatch("json-patch", "[]").ok).toBe(false);
    expect(readPatch("json-patch", '[{"path":"/a"}]')).toMatchObject({
      ok: false,
      message: expect.stringContaining("Operation 1"),
    });
    expect(readPatch("merge-patch", "  ").ok).toBe(false);
  });
});
