import { describe, expect, it } from "vitest";
import { ARCHIVE_CSV_COLUMNS, archiveRowsToCsv } from "./export";
import type { ExportedArchived } from "./use-cases";

const row = (over: Partial<ExportedArchived> = {}): ExportedArchived => ({
  id: "0b3c",
  connectionId: "c",
  queue: "q",
  letterId: "m-1",
  messageId: "1",
  discardJobId: "j",
  discardedAt: "2026-11-30T10:00:00.000Z",
  discardedBy: "a@x",
  discardReason: 'never valid, "v1"',
  sha256: "ab",
  bodySize: 3,
  contentType: null,
  exceptionClass: "=cmd()",
  failureReason: null,
  originQueue: null,
  deadLetteredAt: null,
  expiresAt: "2026-12-30T10:00:00.000Z",
  restoreState: null,
  restoredAt: null,
  restoredBy: null,
  restoreReason: null,
  restoreError: null,
  headers: [{ name: "x-a", value: { t: "string", v: "1" } }],
  ...over,
});

describe("archive CSV", () => {
  it("writes the header once, quotes, neutralises formulas, headers as one JSON cell", () => {
    const csv = archiveRowsToCsv([row()], { header: true });
    const [head, line] = csv.trimEnd().split("\r\n");
    expect(head.split(",")).toEqual([...ARCHIVE_CSV_COLUMNS]);
    expect(line).toContain('"never valid, ""v1"""');
    expect(line).toContain("'=cmd()");
    expect(line).toContain('"{""x-a"":{""t"":""string"",""v"":""1""}}"');
  });

  it("adds payload columns only when asked", () => {
    expect(archiveRowsToCsv([], { header: true, withPayload: true }).trimEnd().split(",").slice(-2)).toEqual([
      "payloadText",
      "payloadBase64",
    ]);
    expect(archiveRowsToCsv([row({ payloadText: "hi", payloadBase64: "aGk=" })], { withPayload: true })).toMatch(
      /,hi,aGk=\r\n$/,
    );
  });
});
