import type { Channel } from "amqplib";
import { describe, expect, it } from "vitest";
import { QueueReader } from "./reader";

/** A channel whose consumer is registered and then sent nothing: a broker slow to deliver, or one with nothing left. */
function silentChannel(): Channel {
  return {
    prefetch: async () => ({}),
    consume: async () => ({ consumerTag: "c1" }),
    cancel: async () => ({}),
  } as unknown as Channel;
}

const base = { max: 10, idleMs: 50, bufferBytes: 1 << 20, minWindow: 4, maxWindow: 100, exclusive: true };

describe("QueueReader: an idle read asks the broker before it stops", () => {
  it("while the queue still holds letters ready it waits on, up to slowMs, then says the broker was slow", async () => {
    let asked = 0;
    const reader = new QueueReader(silentChannel(), "q", {
      ...base,
      slowMs: 400,
      readyCount: async () => {
        asked++;
        return 7;
      },
    });
    await reader.start();
    const t0 = Date.now();
    expect(await reader.next()).toBeNull();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    expect(asked).toBeGreaterThan(1);
    expect(reader.stoppedIdle).toBe(true);
    expect(reader.stopReason).toMatchObject({ kind: "slow", ready: 7 });
  });

  it("a queue with none ready ends the read after the first idle spell", async () => {
    let asked = 0;
    const reader = new QueueReader(silentChannel(), "q", {
      ...base,
      slowMs: 60_000,
      readyCount: async () => {
        asked++;
        return 0;
      },
    });
    await reader.start();
    expect(await reader.next()).toBeNull();
    expect(asked).toBe(1);
    expect(reader.stopReason).toEqual({ kind: "empty" });
  });

  it("without a way to ask, the first idle spell ends the read (the mover's reads)", async () => {
    const reader = new QueueReader(silentChannel(), "q", base);
    await reader.start();
    expect(await reader.next()).toBeNull();
    expect(reader.stopReason).toEqual({ kind: "idle" });
  });
});
