import { describe, expect, it } from "vitest";
import {
  formatBytes,
  formatCount,
  formatLetterCount,
  formatRange,
  formatRate,
  formatRelative,
  formatSpan,
  formatUtc,
  formatAxisTime,
  formatTimestampValue,
  formatWhen,
  truncate,
} from "./format";

const now = new Date("2025-01-31T12:00:00Z");

describe("formatRelative", () => {
  it("says just now within five seconds", () => {
    expect(formatRelative(new Date("2025-01-31T11:59:58Z"), now)).toBe("just now");
  });
  it("uses the largest whole unit", () => {
    expect(formatRelative("2025-01-31T11:59:30Z", now)).toBe("30 s ago");
    expect(formatRelative("2025-01-31T11:48:00Z", now)).toBe("12 min ago");
    expect(formatRelative("2025-01-31T09:00:00Z", now)).toBe("3 h ago");
    expect(formatRelative("2025-01-28T12:00:00Z", now)).toBe("3 d ago");
    expect(formatRelative("2023-01-01T00:00:00Z", now)).toBe("2 y ago");
  });
  it("handles the future and unknown values", () => {
    expect(formatRelative("2025-01-31T12:10:00Z", now)).toBe("in 10 min");
    expect(formatRelative(null, now)).toBe("—");
    expect(formatRelative("not a date", now)).toBe("—");
  });
});

describe("formatUtc", () => {
  it("renders a UTC timestamp", () => {
    expect(formatUtc("2025-01-31T14:05:09.123Z")).toBe("2025-01-31 14:05:09 UTC");
    expect(formatUtc(null)).toBe("");
  });
});

describe("one time format: ISO-8601 UTC with the relative time", () => {
  it("writes the absolute UTC time and the relative one from the injected clock", () => {
    expect(formatWhen("2025-01-31T11:47:59.500Z", now)).toBe("2025-01-31 11:47:59 UTC · 12 min ago");
    expect(formatWhen(new Date("2025-01-31T12:00:30Z"), now)).toBe("2025-01-31 12:00:30 UTC · in 30 s");
    // Across midnight and the year: the UTC date, never the machine's zone.
    const newYear = new Date("2026-01-01T00:00:10Z");
    expect(formatWhen("2025-12-31T23:59:50Z", newYear)).toBe("2025-12-31 23:59:50 UTC · 20 s ago");
    expect(formatWhen(null, now)).toBe("—");
    expect(formatWhen("not a date", now)).toBe("—");
  });
  it("a broker's timestamp keeps its milliseconds, in the same form", () => {
    expect(formatTimestampValue("2025-01-31T14:05:09.123Z")).toBe("2025-01-31 14:05:09.123 UTC");
    expect(formatTimestampValue("2025-01-31T14:05:09.000Z")).toBe("2025-01-31 14:05:09 UTC");
    expect(formatTimestampValue("garbage")).toBe("garbage");
  });
  it("chart axes: 24-hour UTC, with the day beyond a day's span", () => {
    const t = Date.UTC(2025, 0, 31, 23, 45) / 1000;
    expect(formatAxisTime(t, 3600)).toBe("23:45");
    expect(formatAxisTime(t, 86_400)).toBe("23:45");
    expect(formatAxisTime(t, 7 * 86_400)).toBe("01-31 23:45");
  });
});

describe("formatBytes", () => {
  it("uses binary units", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(5 * 1024 * 1024)).toBe("5.0 MB");
    expect(formatBytes(null)).toBe("—");
    expect(formatBytes(-1)).toBe("—");
  });
});

describe("formatCount / truncate / formatRange", () => {
  it("formats counts", () => {
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(null)).toBe("—");
  });
  it("truncates by code point", () => {
    expect(truncate("hello", 10)).toBe("hello");
    expect(truncate("hello world", 6)).toBe("hello…");
    expect(truncate("😀😀😀", 2)).toBe("😀…");
    expect(truncate(null, 3)).toBe("");
  });
  it("describes a page", () => {
    expect(formatRange(50, 50, 1234)).toBe("letters 51–100 of ~1,234");
    expect(formatRange(0, 3, null)).toBe("letters 1–3");
    expect(formatRange(100, 0, 80)).toBe("no letters on this page (of ~80)");
  });
});

describe("formatSpan / formatRate", () => {
  it("uses at most two units, rounded down", () => {
    expect(formatSpan(45_900)).toBe("45 s");
    expect(formatSpan(12 * 60_000 + 59_000)).toBe("12 min");
    expect(formatSpan(3 * 3600_000)).toBe("3 h");
    expect(formatSpan(3 * 3600_000 + 20 * 60_000 + 59_000)).toBe("3 h 20 min");
    expect(formatSpan(2 * 86400_000 + 4 * 3600_000 + 59 * 60_000)).toBe("2 d 4 h");
    expect(formatSpan(7 * 86400_000)).toBe("7 d");
    expect(formatSpan(0)).toBe("0 s");
    expect(formatSpan(-1)).toBe("—");
    expect(formatSpan(null)).toBe("—");
    expect(formatSpan(Number.NaN)).toBe("—");
  });
  it("formats letters per minute", () => {
    expect(formatRate(0)).toBe("0/min");
    expect(formatRate(0.254)).toBe("0.25/min");
    expect(formatRate(3)).toBe("3/min");
    expect(formatRate(1234.4)).toBe("1,234/min");
    expect(formatRate(null)).toBe("—");
  });
});

describe("formatLetterCount", () => {
  it("says the size of a set counted in full, and only a lower bound of one counted up to its cap", () => {
    expect(formatLetterCount(0)).toBe("0 letters");
    expect(formatLetterCount(1)).toBe("1 letter");
    expect(formatLetterCount(9999)).toBe("9,999 letters");
    expect(formatLetterCount(10_000, true)).toBe("at least 10,000 letters");
    expect(formatLetterCount(1, true)).toBe("at least 1 letter");
  });
});
