import { describe, expect, it } from "vitest";
import { lostClass, lostIn, oldestAge, oldestSourceWords } from "./ui-figures";

const now = Date.parse("2025-03-01T12:00:00Z");
const base = {
  depth: 5,
  sampledAt: "2025-03-01T11:59:40Z",
  oldestAt: "2025-03-01T10:00:00Z",
  oldestSource: "broker" as const,
  oldestAsOf: null,
  retentionMs: 4 * 3600_000,
  deadlineAt: "2025-03-01T14:00:00Z",
  error: null,
  missingSince: null,
};

describe("lostIn", () => {
  it("says how long until the oldest letter is lost, urgent under the threshold", () => {
    const r = lostIn(base, 24, now);
    expect(r.text).toBe("lost in 2 h");
    expect(r.tone).toBe("urgent");
    expect(r.title).toContain("from the broker, sampled 20 s ago");
    expect(r.title).toContain("2025-03-01 14:00:00 UTC");
    expect(lostClass(r.tone)).toContain("lost-urgent");
  });
  it("is not urgent above the threshold", () => {
    const r = lostIn(base, 1, now);
    expect(r.tone).toBe("ok");
    expect(lostClass(r.tone)).not.toContain("urgent");
  });
  it("says past due once the deadline has passed", () => {
    expect(lostIn({ ...base, deadlineAt: "2025-03-01T11:00:00Z" }, 24, now)).toMatchObject({
      text: "past due",
      tone: "past",
    });
  });
  it("says kept until removed without a retention", () => {
    expect(lostIn({ ...base, retentionMs: null, deadlineAt: null }, 24, now)).toMatchObject({
      text: "kept until removed",
      tone: "none",
    });
  });
  it("asks for a scan when the age is unknown", () => {
    const r = lostIn({ ...base, oldestAt: null, oldestSource: null, deadlineAt: null }, 24, now);
    expect(r).toMatchObject({ text: "unknown — scan to see", tone: "unknown" });
    expect(r.title).toContain("4 h");
  });
  it("names a scan as the source with its age", () => {
    const r = lostIn({ ...base, oldestSource: "scan", oldestAsOf: "2025-03-01T11:48:00Z" }, 24, now);
    expect(r.title).toContain("as of the scan 12 min ago");
  });
  it("has nothing to lose when empty, gone, or not sampled", () => {
    expect(lostIn({ ...base, depth: 0 }, 24, now)).toMatchObject({ text: "—", tone: "empty" });
    expect(lostIn({ ...base, missingSince: "2025-03-01T11:00:00Z" }, 24, now).tone).toBe("empty");
    expect(lostIn(null, 24, now)).toMatchObject({ text: "—", tone: "unsampled" });
    expect(lostIn(null, 24, now).title).toMatch(/not sampled yet/i);
  });
  it("says when the figures are from an earlier round", () => {
    expect(
      lostIn({ ...base, error: "unavailable:broker", sampledAt: "2025-03-01T11:30:00Z" }, 24, now).title,
    ).toContain("could not reach the broker: these figures are from 30 min ago");
  });
});

describe("oldestAge", () => {
  it("gives the age and its source", () => {
    expect(oldestAge(base, now)).toEqual({
      text: "2 h",
      title: expect.stringContaining("from the broker, sampled 20 s ago"),
    });
    expect(oldestAge({ ...base, oldestAt: null }, now).text).toBe("unknown");
    expect(oldestAge({ ...base, depth: 0 }, now).text).toBe("—");
    expect(oldestAge(null, now).text).toBe("—");
  });
  it("words the source", () => {
    expect(
      oldestSourceWords({ oldestSource: "scan", oldestAsOf: "2025-03-01T11:00:00Z", sampledAt: base.sampledAt }, now),
    ).toBe("as of the scan 1 h ago");
    expect(oldestSourceWords({ oldestSource: null, oldestAsOf: null, sampledAt: base.sampledAt }, now)).toBe(
      "sampled 20 s ago",
    );
  });
});
