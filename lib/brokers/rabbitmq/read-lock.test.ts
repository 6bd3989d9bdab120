import type { Channel } from "amqplib";
import { describe, expect, it } from "vitest";
import { READ_TURN_BUSY } from "@/lib/brokers/contract/errors";
import { READ_LOCK_PREFIX, ReadLocks, readLockName } from "@/lib/brokers/rabbitmq/read-lock";

describe("readLockName", () => {
  it("is the prefix and the DLQ's name while that fits RabbitMQ's 255 bytes, else the name's SHA-256", () => {
    expect(readLockName("orders.dlq")).toBe("dlq-console.read-lock.orders.dlq");
    const fits = "q".repeat(255 - READ_LOCK_PREFIX.length);
    expect(readLockName(fits)).toBe(READ_LOCK_PREFIX + fits);
    const long = `${fits}q`;
    expect(readLockName(long)).toMatch(/^dlq-console\.read-lock\.sha256:[0-9a-f]{64}$/);
    // Bytes, not characters: 117 three-byte characters are 351 bytes.
    const wide = "\u20ac".repeat(117);
    expect(Buffer.byteLength(readLockName(wide))).toBeLessThanOrEqual(255);
    expect(readLockName(wide)).not.toBe(readLockName(`${wide}x`));
  });
});

/**
 * The broker's side of the lock, as RabbitMQ answers it: one owner per lock queue (405 for the
 * others), or 403 for every declaration; a publish to a lock queue that exists lands in it (a
 * waiter asking for its turn), and its owner's passive declaration counts those messages.
 * `refusePublish`: a publish closes its channel (no write permission on the default exchange).
 */
function broker(refuse = false, refusePublish = false) {
  const owned = new Set<string>();
  const declared: string[] = [];
  const deleted: string[] = [];
  const messages = new Map<string, number>();
  let asked = 0;
  /** Closes every open channel as a lost connection does: RabbitMQ drops their exclusive queues. */
  const onClose: Array<() => void> = [];
  const loseConnection = () => {
    owned.clear();
    for (const f of onClose.splice(0)) f();
  };
  const channel = async () => {
    const closers: Array<() => void> = [];
    let closed = false;
    return {
      checkQueue: async (name: string) => {
        if (!owned.has(name)) throw Object.assign(new Error("NOT_FOUND - no queue"), { code: 404 });
        return { queue: name, messageCount: messages.get(name) ?? 0, consumerCount: 0 };
      },
      sendToQueue: (name: string) => {
        if (closed) throw new Error("Channel closed");
        asked++;
        if (refusePublish) {
          closed = true;
          for (const f of closers.splice(0)) f();
          return true;
        }
        if (owned.has(name)) messages.set(name, (messages.get(name) ?? 0) + 1);
        return true;
      },
      on: () => undefined,
      assertQueue: async (name: string) => {
        declared.push(name);
        if (refuse) throw Object.assign(new Error("ACCESS_REFUSED - configure access"), { code: 403 });
        if (owned.has(name))
          throw Object.assign(new Error("RESOURCE_LOCKED - cannot obtain exclusive access"), { code: 405 });
        owned.add(name);
      },
      deleteQueue: async (name: string) => {
        deleted.push(name);
        owned.delete(name);
        messages.delete(name);
      },
      close: async () => undefined,
      once: (event: string, f: () => void) => {
        if (event === "close") {
          onClose.push(f);
          closers.push(f);
        }
      },
      off: () => undefined,
    } as unknown as Channel;
  };
  return { channel, owned, declared, deleted, messages, loseConnection, asked: () => asked };
}

/** One console's locks on the fake broker `b` (each ReadLocks stands for one connection). */
const consoleOn = (b: ReturnType<typeof broker>, busyWaitMs = 5_000) =>
  new ReadLocks({ endpoint: "test", channel: b.channel, busyWaitMs });

describe("ReadLocks in one console", () => {
  it("a second read of the same queue waits for the first one's release; a read of another queue does not", async () => {
    const b = broker();
    const locks = consoleOn(b);
    const first = await locks.acquire("orders.dlq");
    expect(b.owned).toEqual(new Set(["dlq-console.read-lock.orders.dlq"]));
    await (await locks.acquire("payments.dlq")).release();
    let second: Awaited<ReturnType<ReadLocks["acquire"]>> | null = null;
    const waiting = locks.acquire("orders.dlq").then((l) => (second = l));
    await new Promise((r) => setTimeout(r, 50));
    expect(second).toBeNull();
    await first.release();
    await waiting;
    expect(second).not.toBeNull();
    expect(b.owned).toEqual(new Set(["dlq-console.read-lock.orders.dlq"]));
    await second!.release();
    await second!.release(); // twice is harmless
    expect(b.owned.size).toBe(0);
  });

  it("a read still waiting after busyWaitMs is refused as busy, and the holder's lease still works", async () => {
    const b = broker();
    const locks = consoleOn(b, 100);
    const first = await locks.acquire("orders.dlq");
    await expect(locks.acquire("orders.dlq")).rejects.toMatchObject({
      kind: "throttled",
      userMessage:
        'Queue "orders.dlq" is being read right now by another page, job or replica of the console. Try again in a moment.',
    });
    await first.release();
    await (await locks.acquire("orders.dlq")).release();
  });

  it("another console's lock (405) is waited for until busyWaitMs, then busy", async () => {
    const b = broker();
    b.owned.add("dlq-console.read-lock.orders.dlq");
    const locks = consoleOn(b, 200);
    await expect(locks.acquire("orders.dlq")).rejects.toMatchObject({ kind: "throttled" });
    expect(b.declared.length).toBeGreaterThan(1);
    // This console's own map was freed by the refusal: once the other console lets go, it reads.
    b.owned.clear();
    await (await locks.acquire("orders.dlq")).release();
  });

  it("a read that gives its turn up (its turn signal aborted) is refused as busy at once, behind this console's read or another console's", async () => {
    const b = broker();
    // A wait of an hour: only the signal can end it within the test's time.
    const locks = consoleOn(b, 3_600_000);
    const first = await locks.acquire("orders.dlq");
    const here = new AbortController();
    const behindOurs = locks.acquire("orders.dlq", 0, here.signal);
    setTimeout(() => here.abort(), 20);
    await expect(behindOurs).rejects.toMatchObject({ kind: "throttled", details: { busy: READ_TURN_BUSY } });
    await first.release();
    expect(b.owned.size).toBe(0);

    b.owned.add("dlq-console.read-lock.orders.dlq"); // another console's read
    const there = new AbortController();
    const behindTheirs = locks.acquire("orders.dlq", 0, there.signal);
    setTimeout(() => there.abort(), 20);
    await expect(behindTheirs).rejects.toMatchObject({ kind: "throttled", details: { busy: READ_TURN_BUSY } });
    // Nothing of the refused read is left behind: once the other console lets go, a read takes its turn.
    b.owned.clear();
    const aborted = AbortSignal.abort();
    // An aborted signal only ends a wait: a read whose turn it is (the queue free) reads.
    const lease = await locks.acquire("orders.dlq", 0, aborted);
    expect(b.owned).toEqual(new Set(["dlq-console.read-lock.orders.dlq"]));
    await lease.release();
  });

  it("a user refused the lock queue (403) reads with this console's lock only, says so, and does not ask again at every read", async () => {
    const b = broker(true);
    const locks = consoleOn(b, 1_000);
    expect(locks.unshared).toBe(false);
    const first = await locks.acquire("orders.dlq");
    expect(locks.unshared).toBe(true);
    const waiting = locks.acquire("orders.dlq");
    await first.release();
    await (await waiting).release();
    expect(b.declared).toHaveLength(1);
  });

  it("a read that asks keeps the broker's lock for that long: this console's next read takes it over without declaring it again; then it is deleted", async () => {
    const b = broker();
    const locks = consoleOn(b);
    const other = consoleOn(b);
    await (await locks.acquire("orders.dlq", 100)).release();
    expect(locks.keeps("orders.dlq")).toBe(true);
    expect(locks.holds("orders.dlq")).toBe(false);
    expect(b.owned.has("dlq-console.read-lock.orders.dlq")).toBe(true);
    // The next read here: no new declaration.
    const next = await locks.acquire("orders.dlq", 100);
    expect(b.declared).toHaveLength(1);
    expect(locks.keeps("orders.dlq")).toBe(false);
    await next.release();
    // Another console waits out the grace, then gets the lock.
    const started = Date.now();
    const theirs = await other.acquire("orders.dlq");
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(b.deleted).toEqual(["dlq-console.read-lock.orders.dlq"]);
    expect(locks.keeps("orders.dlq")).toBe(false);
    await theirs.release();
  });

  it("a kept lock whose connection was lost is never taken over: the next read declares it again", async () => {
    const b = broker();
    const locks = consoleOn(b);
    await (await locks.acquire("orders.dlq", 60_000)).release();
    expect(locks.keeps("orders.dlq")).toBe(true);
    b.loseConnection();
    expect(locks.keeps("orders.dlq")).toBe(false);
    const again = await locks.acquire("orders.dlq", 60_000);
    expect(b.declared).toHaveLength(2);
    expect(b.owned.has("dlq-console.read-lock.orders.dlq")).toBe(true);
    await again.release();
    await locks.close();
    expect(b.owned.size).toBe(0);
  });
});

describe("ReadLocks across consoles: turns", () => {
  const LOCK = "dlq-console.read-lock.orders.dlq";

  it("a job's next call gives its kept lock to another console that asked, and queues behind that read", async () => {
    const b = broker();
    const job = consoleOn(b);
    const page = consoleOn(b);
    await (await job.acquire("orders.dlq", 60_000)).release();
    expect(job.keeps("orders.dlq")).toBe(true);

    const order: string[] = [];
    const pageRead = page.acquire("orders.dlq").then((l) => {
      order.push("page");
      return l;
    });
    // The page found the lock held and asked for its turn in the lock queue.
    await new Promise((r) => setTimeout(r, 80));
    expect(b.messages.get(LOCK)).toBeGreaterThanOrEqual(1);

    // The job's next call: it sees the ask, deletes its lock, and the page reads first.
    const nextCall = job.acquire("orders.dlq", 60_000).then((l) => {
      order.push("job");
      return l;
    });
    const pageLease = await pageRead;
    expect(b.deleted).toEqual([LOCK]);
    expect(order).toEqual(["page"]);
    await new Promise((r) => setTimeout(r, 150));
    expect(order).toEqual(["page"]); // the job waits while the page reads
    await pageLease.release();
    const jobLease = await nextCall;
    expect(order).toEqual(["page", "job"]);
    expect(b.owned.has(LOCK)).toBe(true);
    await jobLease.release();
    await job.close();
  });

  it("with nobody asking, the job's next call takes its kept lock over as it is", async () => {
    const b = broker();
    const job = consoleOn(b);
    for (let call = 0; call < 5; call++) await (await job.acquire("orders.dlq", 60_000)).release();
    expect(b.declared).toEqual([LOCK]);
    expect(b.deleted).toEqual([]);
    expect(b.asked()).toBe(0);
    await job.close();
  });

  it("a waiter whose ask RabbitMQ refuses (its channel closed) still waits and reads once the lock is free, and asks no more", async () => {
    const b = broker(false, true);
    const job = consoleOn(b);
    const page = consoleOn(b);
    const held = await job.acquire("orders.dlq");
    const pageRead = page.acquire("orders.dlq");
    await new Promise((r) => setTimeout(r, 300));
    expect(b.asked()).toBe(1);
    expect(b.messages.get(LOCK)).toBeUndefined();
    await held.release();
    await (await pageRead).release();
    expect(b.asked()).toBe(1);
  });
});
