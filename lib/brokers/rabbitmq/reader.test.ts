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

describe("QueueReader: no read-ahead past what the caller still wants", () => {
  /** A channel that records consumers and cancels; `deliver` hands the current consumer one letter. */
  function recordingChannel() {
    const consumers: Array<(m: unknown) => void> = [];
    const cancelled: string[] = [];
    let tag = 0;
    const ch = {
      prefetch: async () => ({}),
      consume: async (_q: string, cb: (m: unknown) => void) => {
        consumers.push(cb);
        return { consumerTag: `c${++tag}` };
      },
      cancel: async (t: string) => {
        cancelled.push(t);
        return {};
      },
    } as unknown as Channel;
    let seq = 0;
    const deliver = () =>
      consumers.at(-1)!({
        content: Buffer.alloc(10),
        fields: { consumerTag: `c${consumers.length}`, deliveryTag: ++seq },
        properties: {},
      });
    return { ch, consumers, cancelled, deliver };
  }

  it("cancels its consumer once it holds every letter still wanted, and opens a window again when more are wanted", async () => {
    const c = recordingChannel();
    let wanted = 3;
    const reader = new QueueReader(c.ch, "q", { ...base, max: 100, startWindow: 50, wanted: () => wanted });
    await reader.start();
    c.deliver();
    c.deliver();
    expect(c.cancelled).toEqual([]);
    c.deliver(); // holds 3 of the 3 wanted: the consumer stops
    expect(c.cancelled).toEqual(["c1"]);
    // The caller takes the three; the first answered a request, the other two did not (still 2 wanted).
    expect(reader.take()).toBeDefined();
    wanted = 2;
    expect(reader.take()).toBeDefined();
    expect(reader.take()).toBeDefined();
    // Nothing held, 2 wanted: the next read opens a new consumer.
    const next = reader.next();
    await new Promise((r) => setTimeout(r, 10));
    expect(c.consumers.length).toBe(2);
    c.deliver();
    expect(await next).not.toBeNull();
  });

  it("without `wanted` keeps its consumer while letters come (a walk over every letter)", async () => {
    const c = recordingChannel();
    const reader = new QueueReader(c.ch, "q", { ...base, max: 100, startWindow: 50 });
    await reader.start();
    for (let i = 0; i < 10; i++) c.deliver();
    expect(c.cancelled).toEqual([]);
    expect(reader.take()).toBeDefined();
  });
});
