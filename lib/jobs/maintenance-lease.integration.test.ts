import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type MaintenanceTask, JobWorker } from "./worker";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe("a leased maintenance task", () => {
  it("runs in one process at a time, even when a round outlasts its lease", async () => {
    const name = `test-lease-${randomUUID().slice(0, 8)}`;
    // Each round every 400 ms; the lease lasts three rounds (1.2 s), so a holder that stopped
    // renewing loses it within 1.2 s and another process would take it at its next tick.
    const everyMs = 400;
    const leaseMs = everyMs * 3;
    let running = 0;
    let most = 0;
    const rounds = { a: 0, b: 0 };
    // a's round lasts until the test ends it, far past its lease; b's rounds are short.
    let endRoundA!: () => void;
    const roundAEnds = new Promise<void>((r) => {
      endRoundA = r;
    });
    const task = (who: "a" | "b"): MaintenanceTask => ({
      name,
      everyMs,
      firstAfterMs: 0,
      leased: true,
      run: async () => {
        running++;
        most = Math.max(most, running);
        rounds[who]++;
        try {
          await (who === "a" ? roundAEnds : sleep(50));
        } finally {
          running--;
        }
      },
    });
    // Two console processes (their job polling scoped to no job at all).
    const a = new JobWorker({ handlers: {}, owner: `a-${name}`, scope: { jobIds: [] }, maintenance: [task("a")] });
    const b = new JobWorker({ handlers: {}, owner: `b-${name}`, scope: { jobIds: [] }, maintenance: [task("b")] });
    try {
      a.start();
      await until(() => rounds.a === 1, "a's first round");
      b.start();
      // Without renewal a's lease would lapse 1.2 s into its round and b would start one.
      await sleep(leaseMs * 3);
      expect(rounds).toEqual({ a: 1, b: 0 });
      // a stops mid-round: its lease is kept until that round ends, not given back at stop().
      await a.stop();
      await sleep(leaseMs * 2);
      expect(rounds.b).toBe(0);
      // The round ends: a gives the lease back, and b takes the task over.
      endRoundA();
      await until(() => rounds.b >= 1, "b to take the task over");
      expect(rounds.a).toBe(1);
      expect(most).toBe(1);
    } finally {
      endRoundA();
      await Promise.all([a.stop(), b.stop()]);
      await until(() => running === 0, "the last round to end");
    }
  }, 30_000);
});
