/**
 * One console read of a queue at a time, across every console on the broker (replicas, or another
 * install pointed at the same vhost).
 *
 * A read takes letters without acking them and gives them back when its channel closes, so while
 * it runs the queue looks shorter to everyone else: RabbitMQ's depth counts only letters ready,
 * and a letter held on another channel is delivered to nobody. The reader's exclusive consumer
 * does not keep two reads apart: a read opens a new consumer for each window (reader.ts) and keeps
 * the letters of the last one unacked in between, and it takes the queue's depth before its first
 * consumer. Another read that asked for the depth while the first held every letter, and got its
 * consumer just after the first closed, read "0 letters" and called a letter that never left gone
 * (concurrent-reads.integration.test.ts: 3 of 3 runs before this lock).
 *
 * So a read holds this lock from before it asks for the depth until its channel is closed and its
 * letters are back:
 * - in this process, a map of queues being read (one AMQP connection serves every read here, and
 *   the broker's lock below belongs to a connection);
 * - on the broker, an exclusive queue named after the DLQ (`readLockName`): RabbitMQ lets one
 *   connection declare it, refuses every other with 405 RESOURCE_LOCKED, and deletes it when that
 *   connection closes, so a console that dies mid-read frees it.
 *
 * After a mover's call the broker's lock stays declared for MOVER_LOCK_GRACE_MS: its next call (or
 * any read of this console meanwhile) takes it over without a new declare.
 *
 * Turns across consoles: a read waiting for another console's lock publishes an empty message to
 * the lock queue (RabbitMQ takes a publish to another connection's exclusive queue) each time it
 * tries again. A console about to take over its kept lock for the next call of a job first asks
 * its own lock queue how many messages it holds; if any, another console is waiting, so it deletes
 * the lock, lets the waiter in (YIELD_MS), and then queues for the lock like any read. Without it
 * a job re-took its lock within milliseconds of each call, and a page on another replica waited
 * out busyWaitMs and was refused as busy for as long as the job ran.
 *
 * A user without configure permission on that name cannot declare it: reads then go on with the
 * in-process lock only, and `unshared` says so (the DLQ summary warns).
 */
import { createHash } from "node:crypto";
import type { Channel } from "amqplib";
import { BrokerError, READ_TURN_BUSY } from "@/lib/brokers/contract/errors";
import { closeQuietly, isAccessRefused, isResourceLocked, mapAmqpError } from "@/lib/brokers/rabbitmq/connection";

export const READ_LOCK_PREFIX = "dlq-console.read-lock.";

/** RabbitMQ's limit for a queue name, in UTF-8 bytes. */
const MAX_QUEUE_NAME_BYTES = 255;

/** How long a refused declaration (no configure permission) is trusted before it is tried again. */
const REFUSAL_TTL_MS = 5 * 60_000;

/**
 * How long the mover's broker lock stays declared after a call, for its next call to take over
 * without declaring it again. A declare and delete cost 8 ms on RabbitMQ 3.10 (its metadata store),
 * once per moveLetters call of an unthrottled redrive (~270 ms): ~3% of its time. Pages and scans
 * keep nothing: another console would wait this much longer behind each of them.
 */
export const MOVER_LOCK_GRACE_MS = 200;

/** The lock queue's name: the prefix and the DLQ's name, or its SHA-256 when that would be too long. */
export function readLockName(queue: string): string {
  const plain = READ_LOCK_PREFIX + queue;
  if (Buffer.byteLength(plain, "utf8") <= MAX_QUEUE_NAME_BYTES) return plain;
  return `${READ_LOCK_PREFIX}sha256:${createHash("sha256").update(queue, "utf8").digest("hex")}`;
}

export interface ReadLease {
  /** Call after the read's channel is closed (its letters are back in the queue). Never throws. */
  release(): Promise<void>;
}

export interface ReadLockContext {
  endpoint: string;
  /** A fresh channel on the connection the reads use. */
  channel(): Promise<Channel>;
  /** How long a read waits for another read of the same queue before it is refused as busy. */
  busyWaitMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until `other` settles, `ms` pass or `signal` aborts, whichever comes first. */
function waitFor(other: Promise<unknown> | null, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    other?.then(done, done);
  });
}

/** Once a waiter has asked for its turn, it tries again at most this long apart (within YIELD_MS, so it is there when the holder lets go). */
const WAIT_POLL_MS = 100;
/** How long a console that gave its kept lock up leaves it to the waiter before queueing for it again. */
const YIELD_MS = 250;

/** A waiting read's channel for asking its turn (askForTurn), and whether RabbitMQ closed it. */
interface Asking {
  ch: Channel;
  closed: boolean;
}

interface KeptLock {
  ch: Channel;
  timer: NodeJS.Timeout;
}

export class ReadLocks {
  private readonly held = new Map<string, Promise<void>>();
  /** Broker locks kept after their read (`acquire`'s keepMs), by queue: no read of this console runs. */
  private readonly kept = new Map<string, KeptLock>();
  /** Lock queues being deleted, by queue: declared again only once that is done. */
  private readonly dropping = new Map<string, Promise<void>>();
  /** Lock channels that closed (their lock queue went with them). */
  private readonly gone = new WeakSet<Channel>();
  private refusedAt = 0;

  constructor(private readonly ctx: ReadLockContext) {}

  /** A read of `queue` runs in this console. */
  holds(queue: string): boolean {
    return this.held.has(queue);
  }

  /** This console keeps the broker's lock on `queue` after a read (its grace), and no read runs. */
  keeps(queue: string): boolean {
    return this.kept.has(queue);
  }

  /** Deletes every kept lock now (the adapter closes; its connection's end would drop them anyway). */
  async close(): Promise<void> {
    const all = [...this.kept.entries()];
    this.kept.clear();
    for (const [queue, k] of all) {
      clearTimeout(k.timer);
      await this.drop(queue, k.ch);
    }
  }

  /** True while the broker refuses the lock queue (no configure permission): other consoles' reads are not kept out. */
  get unshared(): boolean {
    return this.refusedAt > 0 && Date.now() - this.refusedAt < REFUSAL_TTL_MS;
  }

  /**
   * Waits until no other read of `queue` runs, here or in any console on the broker, up to
   * busyWaitMs; then refuses with "throttled" (the queue is busy), never with a shorter read.
   * `keepMs`: how long the broker's lock stays declared after the release, for this console's next
   * read to take over (a caller that reads again at once: the mover, call after call); 0 deletes it.
   * `turn`: aborted while the read waits, the read is refused as busy at once, as when busyWaitMs
   * runs out (a page told that a scan holds the queue until its end, lib/dlq/busy.ts); once the
   * lock is taken it has no effect.
   */
  async acquire(queue: string, keepMs = 0, turn?: AbortSignal): Promise<ReadLease> {
    const deadline = Date.now() + this.ctx.busyWaitMs;
    for (;;) {
      const other = this.held.get(queue);
      if (!other) break;
      const left = deadline - Date.now();
      if (left <= 0 || turn?.aborted) throw this.busy(queue);
      await waitFor(other, left, turn);
    }
    let freed!: () => void;
    const mine = new Promise<void>((r) => (freed = r));
    this.held.set(queue, mine);
    const freeHere = () => {
      if (this.held.get(queue) === mine) this.held.delete(queue);
      freed();
    };
    let ch: Channel | null = null;
    const kept = this.kept.get(queue);
    if (kept) {
      this.kept.delete(queue);
      clearTimeout(kept.timer);
      if (await this.othersWait(queue, kept.ch)) {
        // Another console asked for this queue while it was ours: its turn first.
        await this.drop(queue, kept.ch);
        await sleep(Math.min(YIELD_MS, Math.max(0, deadline - Date.now())));
      } else if (!this.gone.has(kept.ch)) {
        // The last read's lock, still declared, and nobody waits: taken over as it is.
        ch = kept.ch;
      }
    }
    if (!ch) {
      try {
        ch = await this.onBroker(queue, deadline, turn);
      } catch (e) {
        freeHere();
        throw e;
      }
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        if (ch && keepMs > 0 && !this.gone.has(ch)) {
          const lock = ch;
          const timer = setTimeout(() => {
            if (this.kept.get(queue)?.ch !== lock) return;
            this.kept.delete(queue);
            void this.drop(queue, lock);
          }, keepMs);
          timer.unref();
          this.kept.set(queue, { ch: lock, timer });
          freeHere();
          return;
        }
        try {
          await this.drop(queue, ch);
        } finally {
          freeHere();
        }
      },
    };
  }

  /**
   * Did a read of another console ask for `queue` while `ch` held its lock: are there messages in
   * the lock queue? Asked on the lock's own channel (the owner may declare its queue passively). A
   * channel that fails the question is closed: the lock is not taken over, and is declared again.
   */
  private async othersWait(queue: string, ch: Channel): Promise<boolean> {
    if (this.gone.has(ch)) return false;
    try {
      const { messageCount } = await ch.checkQueue(readLockName(queue));
      return messageCount > 0;
    } catch {
      this.lost(ch);
      return false;
    }
  }

  private lost(ch: Channel): void {
    this.gone.add(ch);
    for (const [queue, k] of this.kept)
      if (k.ch === ch) {
        clearTimeout(k.timer);
        this.kept.delete(queue);
      }
  }

  /**
   * Deletes the lock queue and closes its channel; a connection that is gone took the queue with it.
   * Never throws. The next declaration of the queue waits for it: on this connection a declare would
   * succeed before the delete and be undone by it.
   */
  private async drop(queue: string, ch: Channel | null): Promise<void> {
    if (!ch) return;
    const done = (async () => {
      await ch.deleteQueue(readLockName(queue)).catch(() => undefined);
      await closeQuietly(ch);
    })();
    this.dropping.set(queue, done);
    try {
      await done;
    } finally {
      if (this.dropping.get(queue) === done) this.dropping.delete(queue);
    }
  }

  /** Declares the lock queue on a channel of its own, kept open for the release; null when the user may not declare it. */
  private async onBroker(queue: string, deadline: number, turn?: AbortSignal): Promise<Channel | null> {
    await this.dropping.get(queue);
    if (this.unshared) return null;
    const name = readLockName(queue);
    let asking: Asking | null | undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        if (attempt > 0) asking = await this.askForTurn(name, asking);
        const ch = await this.attempt(queue, name);
        if (ch !== "locked") return ch;
        if (Date.now() >= deadline || turn?.aborted) throw this.busy(queue);
        const wait = Math.min(asking ? WAIT_POLL_MS : 500, 25 * 2 ** attempt);
        await waitFor(null, Math.min(wait, Math.max(0, deadline - Date.now())), turn);
      }
    } finally {
      if (asking) await closeQuietly(asking.ch);
    }
  }

  /**
   * Tells the lock's holder that a read waits: an empty message into its lock queue, from a channel
   * of its own (opened at the first retry and kept while waiting), expiring when the read would give
   * up. A publish RabbitMQ refuses (no write permission on the default exchange) closes that
   * channel: the read then waits without asking (null), as before turns existed; the lock's own
   * declarations, on their own channels, are not affected.
   */
  private async askForTurn(name: string, asking: Asking | null | undefined): Promise<Asking | null> {
    if (asking === null) return null;
    let a = asking;
    if (!a) {
      try {
        const ch = await this.ctx.channel();
        const opened: Asking = { ch, closed: false };
        ch.once("close", () => (opened.closed = true));
        ch.on("error", () => undefined);
        a = opened;
      } catch {
        return null;
      }
    }
    if (a.closed) return null;
    try {
      a.ch.sendToQueue(name, Buffer.alloc(0), { expiration: String(this.ctx.busyWaitMs) });
    } catch {
      return null;
    }
    return a;
  }

  /** One declaration of the lock queue: its channel (kept for the release), null when the user may not declare it, or "locked" (another console holds it). */
  private async attempt(queue: string, name: string): Promise<Channel | null | "locked"> {
    const ch = await this.ctx.channel();
    try {
      await ch.assertQueue(name, {
        exclusive: true,
        durable: false,
        autoDelete: false,
        // Classic: a vhost whose default queue type is quorum would refuse an exclusive queue.
        arguments: { "x-queue-type": "classic" },
      });
      this.refusedAt = 0;
      // A lock whose channel or connection closed is gone on the broker too: never kept or taken over.
      ch.once("close", () => this.lost(ch));
      return ch;
    } catch (e) {
      await closeQuietly(ch);
      if (isResourceLocked(e)) return "locked";
      if (isAccessRefused(e)) {
        this.refusedAt = Date.now();
        return null;
      }
      throw mapAmqpError(e, { endpoint: this.ctx.endpoint, queue });
    }
  }

  private busy(queue: string): BrokerError {
    return new BrokerError("throttled", {
      userMessage: `Queue "${queue}" is being read right now by another page, job or replica of the console. Try again in a moment.`,
      // Pages name the console's job reading the queue (lib/dlq/busy.ts).
      details: { busy: READ_TURN_BUSY },
    });
  }
}
