import { describe, expect, it } from "vitest";
import { formatAxisTime, formatUtc } from "@/lib/format";
import { chartAxis, rangeSpec, rangeWords } from "./chart-range";

// A clock of the test's own, on a 15-minute boundary of a day relative to now (never a fixed date).
const NOW = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 10 * 3600_000;
const s = (ms: number) => Math.floor(ms / 1000);

describe("a chart's words agree with its axis", () => {
  it("a day's axis is a day wide even when the sampler ran for 15 minutes of it, and the caption says so", () => {
    const day = rangeSpec("day");
    const xs = [s(NOW - 900_000), s(NOW)]; // two 15-minute buckets
    const [from, to] = chartAxis(day, xs, NOW);
    expect(to - from).toBe(86_400);
    expect(to).toBe(s(NOW) + 900); // the newest bucket's end is on the axis
    expect(rangeWords(day, xs, NOW)).toBe(
      `per 15 minutes over the last day; samples since ${formatUtc(NOW - 900_000)}`,
    );
  });

  it("says only the range when samples cover it, and for each range its own bucket", () => {
    const hour = rangeSpec("hour");
    const xs = Array.from({ length: 61 }, (_, i) => s(NOW) - 3600 + i * 60);
    expect(rangeWords(hour, xs, NOW)).toBe("per minute over the last hour");
    expect(rangeWords(rangeSpec("week"), [], NOW)).toBe("per hour over the last week");
    expect(rangeSpec("nonsense").bucket).toBe("per 15 minutes");
  });

  it("axis ticks are UTC and 24-hour, with the day over spans longer than a day", () => {
    const t = s(Date.UTC(new Date(NOW).getUTCFullYear(), 0, 31, 14, 5));
    expect(formatAxisTime(t, 3600)).toBe("14:05");
    expect(formatAxisTime(t, 7 * 86_400)).toBe("01-31 14:05");
  });
});
