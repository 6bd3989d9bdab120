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
 * A user without configure permission on that name cannot declare it: reads then go on with the
 * in-process lock only, and `unshared` says so (the DLQ summary warns).
 */
import { createHash } from "node:crypto";
import type { Channel } from "amqplib";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { closeQuietly, mapAmqpError } from "@/lib/brokers/rabbitmq/connection";

export const READ_LOCK_PREFIX = "dlq-console.read-lock.";

/** RabbitMQ's limit for a queue name, in UTF-8 bytes. */
const MAX_QUEUE_NAME_BYTES = 255;

/** How long a refused declaration (no configure permission) is trusted before it is tried again. */
const REFUSAL_TTL_MS = 5 * 60_000;

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

export class ReadLocks {
  private readonly held = new Map<string, Promise<void>>();
  private refusedAt = 0;

  constructor(private readonly ctx: ReadLockContext) {}

  /** A read of `queue` runs in this console. */
  holds(queue: string): boolean {
    return this.held.has(queue);
  }

  /** True while the broker refuses the lock queue (no configure permission): other consoles' reads are not kept out. */
  get unshared(): boolean {
    return this.refusedAt > 0 && Date.now() - this.refusedAt < REFUSAL_TTL_MS;
  }

  /**
   * Waits until no other read of `queue` runs, here or in any console on the broker, up to
   * busyWaitMs; then refuses with "throttled" (the queue is busy), never with a shorter read.
   */
  async acquire(queue: string): Promise<ReadLease> {
    const deadline = Date.now() + this.ctx.busyWaitMs;
    for (;;) {
      const other = this.held.get(queue);
      if (!other) break;
      const left = deadline - Date.now();
      if (left <= 0) throw this.busy(queue);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([other, new Promise((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
    }
    let freed!: () => void;
    const mine = new Promise<void>((r) => (freed = r));
    this.held.set(queue, mine);
    const freeHere = () => {
      if (this.held.get(queue) === mine) this.held.delete(queue);
      freed();
    };
    let ch: Channel | null;
    try {
      ch = await this.onBroker(queue, deadline);
    } catch (e) {
      freeHere();
      throw e;
    }
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          // A connection that is gone took the lock queue with it.
          if (ch) await ch.deleteQueue(readLockName(queue)).catch(() => undefined);
        } finally {
          await closeQuietly(ch);
          freeHere();
        }
      },
    };
  }

  /** Declares the lock queue on a channel of its own, kept open for the release; null when the user may not declare it. */
  private async onBroker(queue: string, deadline: number): Promise<Channel | null> {
    if (this.unshared) return null;
    const name = readLockName(queue);
    for (let attempt = 0; ; attempt++) {
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
        return ch;
      } catch (e) {
        await closeQuietly(ch);
        const err = e as { code?: number; message?: string };
        if (err.code === 405 || /RESOURCE.LOCKED/.test(err.message ?? "")) {
          if (Date.now() >= deadline) throw this.busy(queue);
          await sleep(Math.min(500, 25 * 2 ** attempt, Math.max(0, deadline - Date.now())));
          continue;
        }
        if (err.code === 403 || /ACCESS.REFUSED/.test(err.message ?? "")) {
          this.refusedAt = Date.now();
          return null;
        }
        throw mapAmqpError(e, { endpoint: this.ctx.endpoint, queue });
      }
    }
  }

  private busy(queue: string): BrokerError {
    return new BrokerError("throttled", {
      userMessage: `Queue "${queue}" is being read right now by another page, job or replica of the console. Try again in a moment.`,
    });
  }
}
