import { describe, expect, it } from "vitest";
import type { FindingRow } from "./findings";
import { groupFindings, splitByAcknowledgement } from "./finding-groups";

let n = 0;
const finding = (over: Partial<FindingRow>): FindingRow => ({
  id: `id-${++n}`,
  connectionId: "c1",
  queue: `q${n}`,
  code: "dlq.no_owner",
  severity: "warning",
  object: `DLQ q${n}`,
  why: "No team owns this DLQ.",
  fix: "Name its owner.",
  firstSeenAt: new Date(Date.now() - 60_000).toISOString(),
  lastSeenAt: new Date().toISOString(),
  resolvedAt: null,
  acknowledgedBy: null,
  acknowledgedAt: null,
  ...over,
});

describe("groupFindings", () => {
  it("folds identical findings into one kind and lists critical kinds first, however few", () => {
    const rows = [
      ...Array.from({ length: 43 }, () => finding({})),
      finding({ code: "rabbitmq.dlq_message_ttl", severity: "critical", why: "expires letters 2 hours", queue: "a" }),
      finding({ code: "rabbitmq.dlq_message_ttl", severity: "critical", why: "expires letters 1 hour", queue: "b" }),
    ];
    const groups = groupFindings(rows);
    expect(groups.map((g) => [g.code, g.severity, g.findings.length])).toEqual([
      ["rabbitmq.dlq_message_ttl", "critical", 2],
      ["dlq.no_owner", "warning", 43],
    ]);
    // Shared words are said once; words that differ are left to each finding.
    expect(groups[1].why).toBe("No team owns this DLQ.");
    expect(groups[0].why).toBeNull();
    expect(groups[1].dlqs).toHaveLength(43);
  });

  it("takes the worst severity of a kind, lists each DLQ once and counts broker-wide findings apart", () => {
    const groups = groupFindings([
      finding({ code: "k", severity: "info", queue: "x" }),
      finding({ code: "k", severity: "critical", queue: "x", object: "policy p" }),
      finding({ code: "k", severity: "warning", queue: null }),
    ]);
    expect(groups).toHaveLength(1);
    expect(groups[0].severity).toBe("critical");
    expect(groups[0].dlqs).toEqual([{ connectionId: "c1", queue: "x" }]);
    expect(groups[0].withoutDlq).toBe(1);
  });

  it("orders kinds of one severity by their count, then by code", () => {
    const groups = groupFindings([
      finding({ code: "b" }),
      finding({ code: "a" }),
      finding({ code: "c" }),
      finding({ code: "c" }),
    ]);
    expect(groups.map((g) => g.code)).toEqual(["c", "a", "b"]);
  });
});

describe("splitByAcknowledgement", () => {
  it("keeps kinds nobody acknowledged apart from acknowledged ones, a kind in both when a new finding came later", () => {
    const at = new Date().toISOString();
    const { pending, acknowledged } = splitByAcknowledgement([
      finding({ code: "dlq.no_owner", acknowledgedAt: at, acknowledgedBy: "op@x" }),
      finding({ code: "dlq.no_owner" }),
      finding({ code: "k", severity: "critical", acknowledgedAt: at, acknowledgedBy: "op@x" }),
    ]);
    expect(pending.map((g) => [g.code, g.findings.length])).toEqual([["dlq.no_owner", 1]]);
    expect(acknowledged.map((g) => [g.code, g.findings.length])).toEqual([
      ["k", 1],
      ["dlq.no_owner", 1],
    ]);
  });
});
