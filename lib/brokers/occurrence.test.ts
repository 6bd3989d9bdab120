import { describe, expect, it } from "vitest";
import { hash64, OccurrenceCounter } from "./occurrence";

/** What the counter must answer: the plain Map of every base it replaced. */
function reference(bases: string[]): string[] {
  const seen = new Map<string, number>();
  return bases.map((b) => {
    const n = (seen.get(b) ?? 0) + 1;
    seen.set(b, n);
    return n === 1 ? b : `${b}~${n}`;
  });
}

describe("OccurrenceCounter", () => {
  it("names the second and later copies of a base ~2, ~3, in read order", () => {
    const occ = new OccurrenceCounter();
    expect(["m-a", "m-b", "m-a", "m-a", "k-c", "m-b"].map((b) => occ.next(b))).toEqual([
      "m-a",
      "m-b",
      "m-a~2",
      "m-a~3",
      "k-c",
      "m-b~2",
    ]);
  });

  it("answers as a map of every base would, across growth of its table", () => {
    // 60,000 draws from 20,000 bases (deterministic), from a table of 16 slots: it grows 12 times.
    const bases: string[] = [];
    let x = 12345;
    for (let i = 0; i < 60_000; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      bases.push(`m-${(x % 20_000).toString(36)}`);
    }
    const occ = new OccurrenceCounter(16);
    expect(bases.map((b) => occ.next(b))).toEqual(reference(bases));
    // Two reads in the same order name the letters the same.
    const again = new OccurrenceCounter();
    expect(bases.map((b) => again.next(b))).toEqual(reference(bases));
  });

  it("holds at most 24 bytes a distinct letter and no string of a letter seen once", () => {
    for (const n of [1_000, 50_000, 300_000]) {
      const occ = new OccurrenceCounter();
      for (let i = 0; i < n; i++) expect(occ.next(`m-bench-${i}`)).toBe(`m-bench-${i}`);
      expect(occ.repeatedCount).toBe(0);
      expect(occ.tableBytes).toBeLessThanOrEqual(Math.max(24 * n, 16 * 1024));
    }
  });

  it("keeps a base only once it repeats", () => {
    const occ = new OccurrenceCounter();
    for (let i = 0; i < 10_000; i++) occ.next(`k-${i}`);
    for (let i = 0; i < 10; i++) expect(occ.next(`k-${i}`)).toBe(`k-${i}~2`);
    expect(occ.repeatedCount).toBe(10);
    expect(occ.next("k-3")).toBe("k-3~3");
  });

  it("hashes to 64 bits that tell near strings apart", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) seen.add(hash64(`m-${i}`).join(":"));
    expect(seen.size).toBe(100_000);
    expect(hash64("m-a")).toEqual(hash64("m-a"));
  });
});
