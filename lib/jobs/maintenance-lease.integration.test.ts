import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type MaintenanceTask, JobWorker } from "./worker";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a leased maintenance task", () => {
  it("runs in one process at a time, even when a round outlasts its lease", async () => {
    const name = `test-lease-${randomUUID().slice(0, 8)}`;
    let running = 0;
    let most = 0;
    const rounds = { a: 0, b: 0 };
    // Rounds of 1.5 s against a lease of 3 x 200 ms: without renewal, b takes the lease mid-round.
    const task = (who: "a" | "b", firstAfterMs: number): MaintenanceTask => ({
      name,
      everyMs: 200,
      firstAfterMs,
      leased: true,
      run: async () => {
        running++;
        most = Math.max(most, running);
        rounds[who]++;
        try {
          await sleep(1500);
        } finally {
          running--;
        }
      },
    });
    // Two console processes (their job polling scoped to no job at all).
    const a = new JobWorker({ handlers: {}, owner: `a-${name}`, scope: { jobIds: [] }, maintenance: [task("a", 0)] });
    const b = new JobWorker({ handlers: {}, owner: `b-${name}`, scope: { jobIds: [] }, maintenance: [task("b", 100)] });
    a.start();
    b.start();
    try {
      await sleep(3000);
      expect(rounds.a).toBeGreaterThanOrEqual(1);
      expect(rounds.b).toBe(0);
      // a stops mid-round: its lease is given back when that round ends, not before; then b takes over.
      while (running === 0) await sleep(20);
      await a.stop();
      await sleep(400);
      expect(rounds.b).toBe(0);
      while (rounds.b === 0) await sleep(50);
      expect(most).toBe(1);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      while (running > 0) await sleep(50);
    }
  });
});
