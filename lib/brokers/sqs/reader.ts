import "server-only";
/**
 * Receives letters from an SQS queue without removing them: every ReceiveMessage hides the letters
 * for an explicit, short visibility timeout, the reader keeps their receipt handles, extends the
 * timeout while a long read is still running, and gives every letter back (visibility 0) when the
 * read ends, fails or is aborted. Receives run a few at a time and stop at the depth observed at
 * the start, or after a few empty answers: never an unbounded loop against a busy queue.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from "@aws-sdk/client-sqs";

export interface ReaderOptions {
  queueUrl: string;
  /** Seconds letters stay hidden after each receive (and each extension). */
  visibilityTimeout: number;
  /** Long-poll seconds per receive (0..20). */
  waitSeconds: number;
  /** Concurrent ReceiveMessage calls. */
  concurrency: number;
  /** Consecutive empty receives after which the queue counts as read to its end. */
  maxEmptyReceives: number;
  signal?: AbortSignal;
}

const chunks = <T>(xs: T[], n: number) =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

export class HeldLetters {
  private readonly handles: string[] = [];
  private lastExtend = Date.now();
  released = false;

  constructor(
    private readonly sqs: SQSClient,
    private readonly opts: ReaderOptions,
  ) {}

  get count() {
    return this.handles.length;
  }

  add(receiptHandle: string) {
    this.handles.push(receiptHandle);
  }

  private async changeAll(timeout: number): Promise<void> {
    const batches = chunks(this.handles, 10);
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++];
        await this.sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.opts.queueUrl,
            Entries: batch.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle, VisibilityTimeout: timeout })),
          }),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, batches.length) }, worker));
  }

  /** Keeps held letters hidden while a read runs longer than half the visibility timeout. */
  async extendIfDue(): Promise<void> {
    if (this.handles.length === 0 || Date.now() - this.lastExtend < (this.opts.visibilityTimeout * 1000) / 2) return;
    this.lastExtend = Date.now();
    await this.changeAll(this.opts.visibilityTimeout);
  }

  /** Makes every held letter visible again. Failures are swallowed: the visibility timeout releases them anyway. */
  async release(): Promise<{ failed: number }> {
    if (this.released) return { failed: 0 };
    this.released = true;
    try {
      await this.changeAll(0);
      return { failed: 0 };
    } catch {
      return { failed: this.handles.length };
    }
  }
}

/**
 * Receives until `want` letters are in `held` (or the queue looks exhausted), calling `onMessage`
 * for each. Each ReceiveMessage asks for as many as `askUpTo` still allows (at most 10), so a
 * call may bring more than `want`: an approximate depth that counts too few letters then costs
 * nothing, and a FIFO group, whose later letters SQS hands out only in the same call as its
 * earlier ones, is read as far as one call goes. Returns whether the queue looked exhausted (fewer
 * letters than wanted).
 */
export async function receiveUpTo(
  sqs: SQSClient,
  held: HeldLetters,
  want: number,
  opts: ReaderOptions,
  onMessage: (m: Message) => void,
  askUpTo = want,
): Promise<{ received: number; exhausted: boolean }> {
  let received = 0;
  let reserved = 0;
  let empties = 0;
  let stop = false;
  let failure: unknown = null;
  const cap = Math.max(want, askUpTo);
  const worker = async () => {
    while (!stop && !failure) {
      if (opts.signal?.aborted) {
        stop = true;
        return;
      }
      if (received + reserved >= want) return;
      const n = Math.min(10, cap - received - reserved);
      if (n <= 0) return;
      reserved += n;
      let msgs: Message[];
      try {
        await held.extendIfDue();
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: opts.queueUrl,
            MaxNumberOfMessages: n,
            VisibilityTimeout: opts.visibilityTimeout,
            WaitTimeSeconds: opts.waitSeconds,
            MessageSystemAttributeNames: ["All"],
            MessageAttributeNames: ["All"],
          }),
          { abortSignal: opts.signal },
        );
        msgs = out.Messages ?? [];
      } catch (e) {
        // Broken off by the caller: what was received is still held and released by the caller.
        if (opts.signal?.aborted) stop = true;
        else failure ??= e;
        return;
      } finally {
        reserved -= n;
      }
      for (const m of msgs) {
        if (m.ReceiptHandle) held.add(m.ReceiptHandle);
        received++;
        onMessage(m);
      }
      if (msgs.length === 0) {
        if (++empties >= opts.maxEmptyReceives) stop = true;
      } else empties = 0;
      if (received >= want) stop = true;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, Math.ceil(want / 10))) }, worker));
  if (failure) throw failure;
  return { received, exhausted: received < want };
}
