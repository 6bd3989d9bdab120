import "server-only";
/**
 * The receipt handles of every DLQ letter a move or discard holds hidden, and their release.
 *
 * A receipt handle is only good while the letter is hidden. Every letter received is held for the
 * move's visibility timeout; holds are extended once half of it has passed, refreshed to the full
 * timeout right before a letter is sent, and everything not removed is made visible again at once
 * (visibility 0) when the call ends, fails, is aborted or the caller stops iterating. The timeout is
 * sized to outlast the longest send the client can make (`moveVisibilitySeconds`).
 */
import { ChangeMessageVisibilityBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";

/**
 * Long enough that a send started right after a refresh ends before the hold does: the client's
 * request timeout × attempts plus 15 s, and never shorter than the configured read timeout.
 */
export function moveVisibilitySeconds(
  readVisibilitySeconds: number,
  requestTimeoutMs: number,
  maxAttempts: number,
): number {
  return Math.min(43_200, Math.max(readVisibilitySeconds, Math.ceil((requestTimeoutMs * maxAttempts) / 1000) + 15));
}

const chunks = <T>(xs: T[], n: number) =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

export class Holds {
  private readonly live = new Set<string>();
  private lastExtend = Date.now();

  constructor(
    private readonly sqs: SQSClient,
    private readonly url: string,
    /** Seconds a letter stays hidden after receive and after each refresh. */
    private readonly timeout: number,
  ) {}

  /** Letters held right now (received, not yet removed nor released). */
  get count(): number {
    return this.live.size;
  }

  add(h: string) {
    this.live.add(h);
  }

  /** Hides these letters for the full timeout again; returns the handles SQS refused (their hold ran out). */
  refresh(handles: string[]): Promise<Set<string>> {
    return this.change(handles, this.timeout);
  }

  /** Sets the visibility of these handles; returns the handles SQS refused. */
  private async change(handles: string[], timeout: number): Promise<Set<string>> {
    const refused = new Set<string>();
    const batches = chunks(handles, 10);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++];
        const out = await this.sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.url,
            Entries: batch.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle, VisibilityTimeout: timeout })),
          }),
        );
        for (const f of out.Failed ?? []) refused.add(batch[Number(f.Id)]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, batches.length) }, worker));
    return refused;
  }

  /** Keeps every held letter hidden once half the timeout has passed since the last extension. */
  async extendIfDue() {
    if (this.live.size === 0 || Date.now() - this.lastExtend < (this.timeout * 1000) / 2) return;
    this.lastExtend = Date.now();
    await this.change([...this.live], this.timeout).catch(() => undefined);
  }

  /** Gone from the DLQ (deleted), or no longer ours (its hold ran out): never released. */
  forget(h: string) {
    this.live.delete(h);
  }

  /** Visible again at once. Failures are swallowed: the visibility timeout releases them anyway. */
  async release(handles: string[]) {
    const mine = handles.filter((h) => this.live.has(h));
    for (const h of mine) this.live.delete(h);
    if (mine.length) await this.change(mine, 0).catch(() => undefined);
  }

  async releaseAll() {
    await this.release([...this.live]);
  }
}
