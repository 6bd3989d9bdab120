/**
 * What the console writes on the letters it moves (redrive markers, the repair marker) and the
 * header names no repair may set or remove.
 */

/**
 * Markers the console adds to every letter it moves (a header, or a message attribute on SQS):
 * x-dlq-redrive-id, x-dlq-replay-id, x-dlq-redrive-count, x-dlq-original-message-id.
 * The letter's own message id, correlation id, body bytes and broker history are kept exactly.
 */
export interface RedriveMarkers {
  /** The job (x-dlq-redrive-id). */
  redriveId: string;
  /** New per letter and attempt (x-dlq-replay-id), so one replay can be traced on its own. */
  replayId: string;
  /** The letter's previous count + 1 (x-dlq-redrive-count); replaces the old value, never appends. */
  redriveCount: number;
  /** x-dlq-original-message-id: the message id the letter had when it first died (kept across cycles). */
  originalMessageId: string | null;
}

export const REDRIVE_HEADERS = {
  redriveId: "x-dlq-redrive-id",
  replayId: "x-dlq-replay-id",
  redriveCount: "x-dlq-redrive-count",
  originalMessageId: "x-dlq-original-message-id",
} as const;

/** The marker a repaired copy carries besides the redrive markers: the repair operation (a UUID). */
export const REPAIR_HEADER = "x-dlq-repaired-by-operation";

/** Properties Pulsar's client writes when it dead-letters or retries a message (lower case). */
const PULSAR_HISTORY = new Set([
  "real_topic",
  "real_subscription",
  "origin_message_id",
  "origin_message_idy_time",
  "reconsumetimes",
  "delay_time",
  "real_topic_partition",
]);

/**
 * Header names an adapter never lets a repair set or remove, because the broker or the console
 * manages them: broker history (x-death, x-first-death-*, x-delivery-count, kafka_dlt-*,
 * __connect.errors.*, Pulsar's REAL_TOPIC and siblings), the console's own `x-dlq-*` markers. SQS
 * system attributes are not headers and cannot be named at all.
 *
 * One list for every broker, not one per adapter: a letter that crossed a bridge keeps the history
 * another system wrote, and every broker refuses all of these names alike (contract-suite/repair.ts).
 */
export function isManagedHeaderName(name: string): boolean {
  const n = name.toLowerCase();
  return (
    PULSAR_HISTORY.has(n) ||
    n.startsWith("x-dlq-") ||
    n === "x-death" ||
    n.startsWith("x-first-death-") ||
    n.startsWith("x-last-death-") ||
    n === "x-delivery-count" ||
    n.startsWith("kafka_dlt-") ||
    n.startsWith("__connect.errors.") ||
    n.startsWith("__streams.errors.")
  );
}
