import { realClock, type Clock } from "./clock";

/**
 * Paces letters at `rate` per second. A take of n letters goes once n/rate seconds have passed since
 * the previous take went (the first take: since it was asked for), never earlier: each batch pays
 * for itself before it goes, so t seconds after the first take at most rate × t letters have gone,
 * and a job of N letters lasts at least N/rate seconds. Time spent idle (slow broker) earns no
 * more than the next batch's own wait, so there is never a burst above the rate: two takes are
 * always at least the second one's n/rate apart. A bucket of capacity one batch that starts empty.
 */
export class TokenBucket {
  /** When the previous take went (ms), or null before the first take and after a reset. */
  private last: number | null = null;

  constructor(
    readonly rate: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new Error(`rate must be a positive number, not ${rate}`);
  }

  /** Waits until `n` letters may go. */
  async take(n: number, signal?: AbortSignal): Promise<void> {
    const now = this.clock.now();
    const due = Math.max(now, (this.last ?? now) + (n * 1000) / this.rate);
    this.last = due;
    if (due > now) await this.clock.sleep(due - now, signal);
  }

  /** Forgets the schedule (after a pause): the next take waits its own n/rate from then, without catching up. */
  reset(): void {
    this.last = null;
  }
}

/**
 * Letters per batch at a rate: about 500 ms worth, 1..2000. Each batch is one broker move call,
 * which has a fixed cost (channel, passive checks, reader start: ~0.2 s on RabbitMQ), so smaller
 * batches could not keep up with 1,000/s; 500 ms keeps pacing smooth and pause/cancel prompt.
 */
export function batchSizeFor(rate: number): number {
  return Math.max(1, Math.min(2000, Math.ceil(rate / 2)));
}

/**
 * Letters published and not yet confirmed at once (MoveOptions.maxInFlight) at a rate: enough to
 * sustain the rate at a confirm round trip of 250 ms, 64..512. Throughput on RabbitMQ is about
 * window ÷ confirm latency, so 64 held a 1,000/s job to 540–850/s on a loaded machine. The window
 * is also the crash window: a process killed mid-batch may leave up to this many letters both at
 * the target and in the DLQ (tagged with their replay ids), so slow jobs keep the small one.
 */
export function moveWindowFor(rate: number): number {
  return Math.max(64, Math.min(512, Math.ceil(rate / 4)));
}
