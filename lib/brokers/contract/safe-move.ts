/** Moving a risky DLQ's letters where reading them is safe (`BrokerAdapter.safeMove`). */

/**
 * How a risky DLQ's letters can be moved where reading them is safe, before anything reads them
 * (`SafeMoveOps.plan`). Nothing is changed by planning.
 */
export interface SafeMovePlan {
  /** The queue the letters go to; the move creates it when missing. */
  target: string;
  /** True when `target` exists already (a move made earlier, or created by hand). */
  targetExists: boolean;
  /** Operator words: what the target is and why reading it is safe. */
  description: string;
  /** The broker permissions the move needs, in the broker's own words (for the confirm screen and the README). */
  permissions: string[];
  /** Letters in the DLQ now, as the broker counts them. */
  depth: number | null;
}

/**
 * One event of a move to safety. Where the broker moves letter by letter (RabbitMQ), one "letter"
 * event per letter that settled; where it moves the queue natively (SQS message move task), only
 * "progress" events with the broker's counts. Always a final "progress" event.
 */
export type SafeMoveEvent =
  | {
      kind: "letter";
      letterId: string;
      messageId: string | null;
      sha256: string;
      bodySize: number;
      outcome: "moved" | "failed";
      /** Operator words when failed (the letter stays in the DLQ). */
      reason: string | null;
    }
  | { kind: "progress"; moved: number; failed: number; total: number | null; done: boolean };

/** Move to safety, where a broker has it (`BrokerAdapter.safeMove`): a risky DLQ's letters moved where reading them is safe. */
export interface SafeMoveOps {
  /**
   * How this DLQ's letters would be moved to safety (the target queue, whether it exists, the
   * permissions needed). Changes nothing; reads no letter. Throws `not_found` for a DLQ that does
   * not exist.
   */
  plan(dlq: string): Promise<SafeMovePlan>;
  /**
   * Moves every letter that is in `dlq` when the call starts into `target` (a plan's target,
   * created when missing, as a queue that reading does not harm), conserving: each letter is
   * published to the target and confirmed by the broker before it leaves the DLQ; bytes, message
   * id, properties, headers and broker history are kept exactly; no redrive marker is added. Each
   * letter is read at most once, and a letter that moved is never returned to the DLQ (so the read
   * costs it nothing); one whose move failed stays in the DLQ. `signal` stops between letters. Runs
   * until the letters present at the start are moved, or the DLQ is empty.
   */
  move(dlq: string, target: string, opts?: { signal?: AbortSignal }): AsyncIterable<SafeMoveEvent>;
}
