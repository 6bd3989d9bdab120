/** Moving a risky DLQ's letters where reading them is safe (`BrokerAdapter.planSafeMove`, `moveToSafety`). */

/**
 * How a risky DLQ's letters can be moved where reading them is safe, before anything reads them
 * (`BrokerAdapter.planSafeMove`). Nothing is changed by planning.
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
