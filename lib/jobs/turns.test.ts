import { describe, expect, it } from "vitest";
import { cooperativeTurns } from "./turns";

/** Runs synchronously for `ms` (a letter's CPU work, many times over). */
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/**
 * A loop over work that is already in hand (a scan's letters buffered by the broker's stream) never
 * waits for I/O: without turns, a timer or a page's request in the same process waits for the whole loop.
 */
async function loop(turns: ReturnType<typeof cooperativeTurns> | null, steps: number): Promise<number | null> {
  let firedAt: number | null = null;
  let step = 0;
  setTimeout(() => (firedAt = step), 0);
  for (; step < steps; step++) {
    busy(1);
    const turn = turns?.turn();
    if (turn) await turn;
    else await Promise.resolve(); // as a buffered stream's next() resolves: a microtask, no turn
  }
  return firedAt;
}

describe("cooperativeTurns: a job's loop lets the rest of the process in", () => {
  it("without turns, a timer due at the start fires only after the loop", async () => {
    expect(await loop(null, 60)).toBeNull();
  });

  it("with turns, the timer fires within the loop's first slices, long before its end", async () => {
    const firedAt = await loop(cooperativeTurns(10), 200);
    expect(firedAt).not.toBeNull();
    expect(firedAt!).toBeLessThan(100);
  });

  it("gives no turn while the loop has run for less than its slice", () => {
    const turns = cooperativeTurns(60_000);
    for (let i = 0; i < 1_000; i++) expect(turns.turn()).toBeNull();
  });
});
