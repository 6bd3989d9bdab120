import { describe, expect, it } from "vitest";
import { unhandledCount } from "./partitions";

describe("unhandledCount", () => {
  it("is null without partitions", () => {
    expect(unhandledCount({})).toBeNull();
    expect(unhandledCount({ partitions: [] })).toBeNull();
  });
  it("sums letters minus handled over partitions", () => {
    const p = (partition: number, letters: number, handled: number) => ({
      partition,
      start: "0",
      end: String(letters),
      letters,
      handled,
      oldestUnhandledAt: null,
    });
    expect(unhandledCount({ partitions: [p(0, 10, 3), p(1, 5, 0)] })).toBe(12);
  });
});
