/**
 * Reads a queue from its head without taking letters away: consume with manual ack, never ack,
 * and the caller closes the channel afterwards so RabbitMQ returns every letter in order.
 *
 * Unacked letters cannot exceed the consumer's prefetch, and RabbitMQ fixes a consumer's prefetch
 * when it starts. So the reader consumes in windows: a consumer with prefetch W receives exactly W
 * letters (which stay unacked on the channel), is cancelled, and the next consumer with a new
 * prefetch continues after them. The next window is only opened when the caller has taken most of
 * the buffered letters: that is the backpressure, and W adapts to the letters' size so buffered
 * bytes stay near `bufferBytes` (at least `minWindow` letters).
 */
import type { Channel, ConsumeMessage } from "amqplib";

export interface ReaderOptions {
  /** Stop after this many letters (the depth observed at the start of the read). */
  max: number;
  /** Stop when no letter arrives for this long: the queue held fewer letters than reported. */
  idleMs: number;
  /**
   * Asked when no letter came for idleMs: how many letters the queue holds ready (not yet sent to
   * any consumer). While it holds some, the broker is slow, not empty, and the read waits on, up to
   * `slowMs` without a letter. Without it, the first idle spell ends the read.
   */
  readyCount?: () => Promise<number>;
  /** How long a read waits without a letter while the queue still holds letters ready (default 120 s). */
  slowMs?: number;
  /** How long an idle read waits for readyCount's answer before it takes the broker for stopped (default ANSWER_MS). */
  answerMs?: number;
  bufferBytes: number;
  minWindow: number;
  maxWindow: number;
  /** Exclusive consumers: a second reader of the same queue is refused instead of seeing a subset. */
  exclusive: boolean;
  /**
   * The first window's size; each further window doubles it, up to `maxWindow` (default: every
   * window up to `maxWindow`). For a caller that acks as it goes (the mover): its letters at the
   * head are read with little read-ahead, while a sparse selection still gets large windows.
   */
  startWindow?: number;
  /**
   * How many more letters the caller may still take (default: every letter up to `max`). Once the
   * reader holds that many not taken yet, its consumer is cancelled, and a window is opened again
   * only when the caller wants more than the reader holds. A caller that acks as it goes (the
   * mover) refills its consumer's prefetch with every ack, so without this the consumer kept
   * delivering past the caller's last letter: up to a whole window (at 512 letters in flight, a
   * third more deliveries than letters moved), all of it returned to the queue when the channel
   * closed, and delivered again to the next call.
   */
  wanted?: () => number;
}

/**
 * Why a read stopped before `max`: nothing came and no readyCount was given (idle); the queue held
 * no letter ready (empty: the rest expired or were taken); it held some but delivered none for
 * slowMs (slow); it did not say within `answerWaitMs` (unanswered).
 */
export type ReadStop =
  | { kind: "idle" }
  | { kind: "empty" }
  | { kind: "unanswered" }
  | { kind: "slow"; ready: number; waitedMs: number };

/**
 * How long an idle read that answers a page (browse, one letter) waits for the broker to say how
 * many letters it still holds ready. Background reads wait longer (RabbitMqAdapterOptions.streamAnswerMs).
 */
export const ANSWER_MS = 5000;

export class QueueReader {
  private buf: ConsumeMessage[] = [];
  private head = 0;
  private received = 0;
  private receivedBytes = 0;
  private windowLeft = 0;
  private windowSize = 0;
  private windowsOpened = 0;
  private consumerTag: string | null = null;
  private chaining: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private failure: unknown = null;
  private idleStop = false;
  /** When the current spell without a letter began (0: a letter came since). */
  private idleSince = 0;
  private stop: ReadStop | null = null;

  constructor(
    private readonly ch: Channel,
    private readonly queue: string,
    private readonly opts: ReaderOptions,
  ) {}

  /** Starts the first consumer; rejects with the broker's error (e.g. 403 exclusive use). */
  async start(): Promise<void> {
    if (this.opts.max > 0) await this.openWindow();
  }

  private nextWindowSize(): number {
    const avg = this.received > 0 ? Math.max(64, this.receivedBytes / this.received) : 4096;
    const w = Math.floor(this.opts.bufferBytes / avg);
    const cap = this.opts.startWindow
      ? Math.min(this.opts.maxWindow, this.opts.startWindow * 2 ** Math.min(this.windowsOpened, 20))
      : this.opts.maxWindow;
    return Math.max(this.opts.minWindow, Math.min(cap, w, this.opts.max - this.received));
  }

  private readonly onMessage = (m: ConsumeMessage | null) => {
    if (m === null) {
      this.failure ??= Object.assign(
        new Error(`Channel closed: consumer of ${this.queue} was cancelled by the broker`),
        {},
      );
    } else {
      this.buf.push(m);
      this.idleSince = 0;
      this.received++;
      this.receivedBytes += m.content.length;
      this.windowLeft--;
      if (this.opts.wanted && this.consumerTag !== null && !this.chaining && this.buffered() >= this.opts.wanted())
        this.pause();
    }
    this.wake?.();
  };

  /** Cancels the consumer: the reader holds every letter the caller still wants (`wanted`). */
  private pause() {
    const tag = this.consumerTag!;
    this.consumerTag = null;
    this.windowLeft = 0;
    this.chaining = this.ch
      .cancel(tag)
      .then(
        () => undefined,
        (e: unknown) => {
          this.failure ??= e;
        },
      )
      .finally(() => {
        this.chaining = null;
        this.wake?.();
      });
  }

  private async openWindow(): Promise<void> {
    if (this.consumerTag) {
      await this.ch.cancel(this.consumerTag);
      this.consumerTag = null;
    }
    const size = this.nextWindowSize();
    this.windowsOpened++;
    this.windowSize = size;
    this.windowLeft = size;
    await this.ch.prefetch(size, false);
    const ok = await this.ch.consume(this.queue, this.onMessage, { noAck: false, exclusive: this.opts.exclusive });
    this.consumerTag = ok.consumerTag;
  }

  private chain() {
    this.chaining ??= this.openWindow()
      .catch((e) => {
        this.failure ??= e;
      })
      .finally(() => {
        this.chaining = null;
        this.wake?.();
      });
  }

  private buffered() {
    return this.buf.length - this.head;
  }

  /** After a letter was taken: opens the next window early, while letters are still buffered. */
  private maybeChain() {
    if (
      !this.chaining &&
      this.windowLeft <= 0 &&
      this.received < this.opts.max &&
      this.buffered() <= this.windowSize / 2 &&
      // The letter just taken may answer one of the letters `wanted` still counts.
      (!this.opts.wanted || this.buffered() < this.opts.wanted() - 1)
    )
      this.chain();
  }

  /**
   * The next letter when the reader holds one already, else undefined (then `next` waits for it or
   * says why the read ended): no promise per letter. The caller checks its signal itself.
   */
  take(): ConsumeMessage | undefined {
    if (this.failure || this.buffered() === 0) return undefined;
    const m = this.buf[this.head];
    this.buf[this.head++] = undefined as unknown as ConsumeMessage;
    if (this.head > 1024 && this.head * 2 > this.buf.length) {
      this.buf = this.buf.slice(this.head);
      this.head = 0;
    }
    this.maybeChain();
    return m;
  }

  /** The next letter in queue order, or null at the end (max reached or idle). */
  async next(signal?: AbortSignal): Promise<ConsumeMessage | null> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (signal?.aborted) return null;
      const m = this.take();
      if (m) return m;
      if (this.received >= this.opts.max) return null;
      if (this.chaining) {
        await this.chaining;
        continue;
      }
      if (this.windowLeft <= 0) {
        this.chain();
        continue;
      }
      const arrived = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => {
          this.wake = null;
          resolve(false);
        }, this.opts.idleMs);
        this.wake = () => {
          clearTimeout(t);
          this.wake = null;
          resolve(true);
        };
      });
      if (!arrived && this.buffered() === 0 && !this.failure) {
        if (this.idleSince === 0) this.idleSince = Date.now() - this.opts.idleMs;
        if (await this.brokerStillHolds()) continue;
        this.idleStop = true;
        return null;
      }
    }
  }

  /**
   * After an idle spell: does the broker still hold letters for this read? It answers on the same
   * channel, after every delivery it sent before (one queue, one channel: AMQP keeps their order), so
   * letters that were on their way are in the buffer by the time its count is read. Letters ready in
   * the queue mean a slow broker (deep queues are paged from disk): wait on, up to slowMs. None
   * ready, or no answer within answerWaitMs (a broker or network that stopped): what the window still
   * expects is not coming.
   */
  private async brokerStillHolds(): Promise<boolean> {
    const ask = this.opts.readyCount;
    if (!ask) {
      this.stop = { kind: "idle" };
      return false;
    }
    let timer: NodeJS.Timeout | undefined;
    const ready = await Promise.race([
      ask().catch(() => null),
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), this.answerWaitMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (this.buffered() > 0 || this.failure) return true;
    if (ready === null) {
      this.stop = { kind: "unanswered" };
      return false;
    }
    const waitedMs = Date.now() - this.idleSince;
    if (ready > 0 && waitedMs < (this.opts.slowMs ?? 120_000)) return true;
    this.stop = ready > 0 ? { kind: "slow", ready, waitedMs } : { kind: "empty" };
    return false;
  }

  /**
   * The caller acked this letter: when the current consumer delivered it, its prefetch has room for
   * one more, which it will deliver without a new window being opened.
   */
  acked(m: ConsumeMessage): void {
    if (this.consumerTag !== null && m.fields.consumerTag === this.consumerTag) this.windowLeft++;
  }

  get count(): number {
    return this.received;
  }

  /** How long an idle spell's question to the broker is waited for (at least idleMs). */
  get answerWaitMs(): number {
    return Math.max(this.opts.idleMs, this.opts.answerMs ?? ANSWER_MS);
  }

  /** The read ended because no letter came for idleMs before `max` was reached. */
  get stoppedIdle(): boolean {
    return this.idleStop;
  }

  /** Why an idle read stopped (null unless stoppedIdle). */
  get stopReason(): ReadStop | null {
    return this.idleStop ? this.stop : null;
  }
}
