import { describe, expect, it } from "vitest";
import {
  archivedOriginalHref,
  bodyEdit,
  bytesToBase64,
  headerEdits,
  offsetOf,
  targetText,
  wholeText,
  type HeaderRow,
} from "./edit";
import { repairProvenance } from "./provenance";

const row = (p: Partial<HeaderRow> & { name: string }): HeaderRow => ({
  key: p.name,
  original: "v",
  value: "v",
  removed: false,
  lockedBecause: null,
  ...p,
});

describe("headerEdits", () => {
  it("sends only what changed: a changed value, a removal and a new header; an untouched header is not set again", () => {
    const rows = [
      row({ name: "same" }),
      row({ name: "changed", value: "w" }),
      row({ name: "gone", removed: true }),
      row({ name: " x-new ", original: null, value: "1" }),
    ];
    expect(headerEdits(rows)).toEqual({ setHeaders: { changed: "w", "x-new": "1" }, removeHeaders: ["gone"] });
  });

  it("never sends an edit of a locked header, and drops a new header without a name or one removed again", () => {
    const rows = [
      row({ name: "x-death", value: "forged", lockedBecause: "managed" }),
      row({ name: "", original: null, value: "1" }),
      row({ name: "x-b", original: null, value: "2", removed: true }),
    ];
    expect(headerEdits(rows)).toEqual({ setHeaders: {}, removeHeaders: [] });
  });
});

describe("bodyEdit", () => {
  it("leaves an untouched payload out, so it travels byte for byte", () => {
    expect(bodyEdit("json", '{"a":1}', '{"a":1}', null)).toBeUndefined();
    expect(bodyEdit("json", '{"a":1}', '{"a":2}', null)).toEqual({ kind: "json", text: '{"a":2}' });
    expect(bodyEdit("text", "hi", "ho", null)).toEqual({ kind: "text", text: "ho" });
  });

  it("replaces a binary payload only by a file, never by text", () => {
    expect(bodyEdit("binary", null, "typed text", null)).toBeUndefined();
    expect(bodyEdit("binary", null, "", "AAE=")).toEqual({ kind: "file", base64: "AAE=" });
  });
});

describe("wholeText", () => {
  it("is true only when the letter page's view is the whole payload", () => {
    expect(wholeText({ kind: "json", note: null }, 10, 100)).toBe(true);
    expect(wholeText({ kind: "text", note: "JSON nested deeper than 64 levels: shown as raw text." }, 10, 100)).toBe(
      true,
    );
    expect(
      wholeText({ kind: "text", note: "Text cut short; download the original bytes for all of it." }, 10, 100),
    ).toBe(false);
    expect(wholeText({ kind: "json", note: null }, 101, 100)).toBe(false);
    expect(wholeText({ kind: "hex", note: null }, 10, 100)).toBe(false);
    expect(wholeText(null, 10, 100)).toBe(false);
  });
});

describe("offsetOf", () => {
  it("finds a 1-based line and column in the text, clamped to its end", () => {
    const t = '{\n  "a": 1,\n  "b" 2\n}';
    expect(t.slice(offsetOf(t, 3, 7))).toBe("2\n}");
    expect(offsetOf(t, 1, 1)).toBe(0);
    expect(offsetOf(t, 9, 1)).toBe(t.length);
  });
});

describe("links and words", () => {
  it("names the target and links the archive filtered to the repair's operation", () => {
    expect(targetText({ kind: "origin" }, "orders")).toBe("its origin, orders");
    expect(targetText({ kind: "queue", name: "orders.retry" }, "orders")).toBe("orders.retry");
    const op = "0b6f3c1e-2d4a-4f5b-8c9d-0e1f2a3b4c5d";
    expect(archivedOriginalHref(op, { connectionId: "local-rabbitmq", queue: "orders.dlq", id: "m-1" })).toBe(
      `/archive?operation=${op}`,
    );
  });

  it("falls back to searching for the original's id when a copy's marker is not an operation id", () => {
    expect(archivedOriginalHref("forged", { connectionId: "c", id: "id 1" })).toBe("/archive?connectionId=c&q=id+1");
    expect(archivedOriginalHref("", { connectionId: "c", queue: "q.dlq", id: null })).toBe(
      "/archive?connectionId=c&queue=q.dlq",
    );
  });

  it("encodes file bytes as base64", () => {
    expect(bytesToBase64(new Uint8Array([0, 1, 255]))).toBe(Buffer.from([0, 1, 255]).toString("base64"));
    const big = new Uint8Array(100_000).map((_, i) => i % 256);
    expect(bytesToBase64(big)).toBe(Buffer.from(big).toString("base64"));
  });
});

describe("repairProvenance", () => {
  it("reads the repair markers of a repaired copy, names matched without case", () => {
    const headers = [
      { name: "X-DLQ-Repaired-By-Operation", value: { t: "string" as const, v: "op-1" } },
      { name: "x-dlq-original-message-id", value: { t: "string" as const, v: "ord-7" } },
    ];
    expect(repairProvenance(headers)).toEqual({ operationId: "op-1", originalMessageId: "ord-7" });
    expect(repairProvenance([headers[0]])).toEqual({ operationId: "op-1", originalMessageId: null });
    expect(repairProvenance([headers[1]])).toBeNull();
  });
});
