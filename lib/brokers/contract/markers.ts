/**
 * What the console writes on the letters it moves (redrive markers, the repair marker), and how the
 * header names no repair may set or remove are declared and matched. No broker's names live here:
 * each adapter declares its own.
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

/**
 * Header names one system writes and keeps, which no repair may set or remove: its history and
 * provenance (RabbitMQ's x-death, Kafka's kafka_dlt-*), or the console's own markers. Each adapter
 * declares its broker's (`BrokerAdapter.managedHeaders`, in its folder's managed-headers.ts); the
 * console declares its own below. Names and prefixes are compared without regard to case.
 */
export interface ManagedHeaders {
  /** Who writes them, for a reader of the declaration: "RabbitMQ's dead-lettering". */
  managedBy: string;
  /** Whole names. */
  names: readonly string[];
  /** Name prefixes: a name that starts with one is managed. */
  prefixes: readonly string[];
}

/** The console's own markers: x-dlq-redrive-id and its siblings, x-dlq-repaired-by-operation. */
export const CONSOLE_MANAGED_HEADERS: ManagedHeaders = {
  managedBy: "the console (its x-dlq-* markers)",
  names: [],
  prefixes: ["x-dlq-"],
};

/** True when a header name is managed by one of the declarations it was built from. */
export type ManagedHeaderMatcher = (name: string) => boolean;

/**
 * The matcher of names no repair may set or remove, from every declaration it must honour. An
 * adapter refuses the names of every broker and of the console, not only its own: a letter can
 * carry history another system wrote (a record bridged from Kafka into SQS keeps its kafka_dlt-*
 * headers, a message shovelled from RabbitMQ keeps x-death), and a repair that rewrote it would
 * make the copy lie about where it failed. The registry (lib/connections/managed-headers.ts)
 * unions every adapter's declaration and the console's and hands the union to each adapter.
 */
export function managedHeaderMatcher(declarations: readonly ManagedHeaders[]): ManagedHeaderMatcher {
  const names = new Set(declarations.flatMap((d) => d.names.map((n) => n.toLowerCase())));
  const prefixes = [...new Set(declarations.flatMap((d) => d.prefixes.map((p) => p.toLowerCase())))];
  return (name) => {
    const n = name.toLowerCase();
    return names.has(n) || prefixes.some((p) => n.startsWith(p));
  };
}
