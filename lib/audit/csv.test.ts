import { describe, expect, it } from "vitest";
import { AUDIT_CSV_COLUMNS, auditRowsToCsv, csvCell } from "./csv";
import type { AuditRow } from "./types";

const row = (over: Partial<AuditRow> = {}): AuditRow => ({
  id: "7",
  operationId: "00000000-0000-4000-8000-000000000001",
  scope: "operation",
  at: "2026-01-02T03:04:05.678Z",
  actorId: null,
  actorEmail: "ops@example.com",
  actorRole: "operator",
  action: "letter.view",
  outcome: "success",
  connectionId: "local",
  queue: "orders.dlq",
  target: "msg-1",
  requestId: null,
  ip: null,
  details: null,
  prevHash: "0".repeat(64),
  hash: "a".repeat(64),
  keyId: "local",
  ...over,
});

describe("csvCell", () => {
  it("quotes commas, quotes and line breaks, doubling inner quotes", () => {
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("line\nbreak")).toBe('"line\nbreak"');
    expect(csvCell(null)).toBe("");
    expect(csvCell(undefined)).toBe("");
    expect(csvCell(42)).toBe("42");
  });

  it("defuses cells a spreadsheet would run as formulas", () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvCell("+1+1")).toBe("'+1+1");
    expect(csvCell("-2+3")).toBe("'-2+3");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("\tcmd")).toBe("'\tcmd");
    expect(csvCell("\rcmd")).toBe('"\'\rcmd"');
    expect(csvCell("a=b")).toBe("a=b");
  });

  it("writes objects as JSON", () => {
    expect(csvCell({ a: 1, b: "x,y" })).toBe('"{""a"":1,""b"":""x,y""}"');
  });
});

describe("auditRowsToCsv", () => {
  it("writes a header then one CRLF line per row", () => {
    const csv = auditRowsToCsv([row(), row({ id: "8", target: "=cmd|' /C calc'!A0", details: { n: 1 } })]);
    const lines = csv.split("\r\n");
    expect(lines[0]).toBe(AUDIT_CSV_COLUMNS.join(","));
    expect(lines[1].startsWith("7,2026-01-02T03:04:05.678Z,")).toBe(true);
    expect(lines[2]).toContain(`'=cmd|' /C calc'!A0`);
    expect(lines[2]).toContain('"{""n"":1}"');
    expect(lines[3]).toBe("");
    expect(lines).toHaveLength(4);
  });

  it("omits the header on later batches and returns only the header for no rows", () => {
    expect(auditRowsToCsv([row()], { header: false }).startsWith("7,")).toBe(true);
    expect(auditRowsToCsv([])).toBe(`${AUDIT_CSV_COLUMNS.join(",")}\r\n`);
    expect(auditRowsToCsv([], { header: false })).toBe("");
  });
});
