/** The operations sampler's one cheap look at a broker: DLQ vitals and configuration findings. */

/** What the operations sampler asks of every adapter in one look (`inspect`). */
export interface InspectOptions {
  /** A Kafka DLT whose retention.ms is below this is a finding (config: operations.kafkaMinRetentionDays). */
  minRetentionMs: number;
  signal?: AbortSignal;
}

/**
 * One cheap look at the broker: the vitals of every DLQ the adapter lists (configured plus
 * discovered) and the configuration faults that lose or risk letters. Bounded cost whatever the
 * number of queues: a constant number of management requests per RabbitMQ broker, attribute reads
 * for SQS, offsets and configs for Kafka (one record at a partition's log start at most, which is
 * harmless there). It never reads a letter from a queue where reading costs anything, and never
 * changes a receive or delivery count.
 */
export interface BrokerInspection {
  dlqs: DlqVitals[];
  findings: ConfigFinding[];
  /** Requests made to the broker for this look (for the benchmark and the logs). */
  calls: number;
}

export interface DlqVitals {
  /** The DLQ's name as `listDlqs` gives it. */
  name: string;
  queueType: string;
  depth: number | null;
  /**
   * Letters delivered and not yet settled (held by a consumer or a console read; back in the DLQ if
   * released): RabbitMQ messages_unacknowledged, SQS ApproximateNumberOfMessagesNotVisible. Null
   * where the broker has no such state (Kafka: a read takes nothing from the topic).
   */
  inFlight: number | null;
  /**
   * A counter of letters that ever entered the DLQ, as the broker keeps it (Kafka: the sum of end
   * offsets); null when it keeps none, and then inflow is taken from depth increases.
   */
  enteredTotal: number | null;
  /**
   * When the oldest letter's retention clock started, as the broker tells it without a read that
   * costs anything (RabbitMQ head_message_timestamp; Kafka the record at each partition's log start);
   * null when it cannot: the sampler then uses the last scan's figure and says so.
   */
  oldestAt: string | null;
  /** How long a letter stays before the broker deletes it (message TTL, MessageRetentionPeriod, retention.ms); null: until removed. */
  retentionMs: number | null;
  /**
   * Where the retention clock of a letter starts: "enqueue" at its first enqueue anywhere (SQS
   * standard queues keep the original SentTimestamp across the move to the DLQ), "arrival" when it
   * entered the DLQ (RabbitMQ, SQS FIFO, Kafka record timestamps of the DLT).
   */
  retentionClock: "enqueue" | "arrival";
}

export type FindingSeverity = "critical" | "warning" | "info";

/** A configuration fault that loses or risks letters, in words an operator can act on. */
export interface ConfigFinding {
  /** Stable code `<broker>.<fault>`, e.g. "rabbitmq.dlx_missing"; with `object`, it identifies the finding across rounds. */
  code: string;
  severity: FindingSeverity;
  /** The broker object at fault as the broker names it: "queue orders (vhost /)", "topic orders.DLT". */
  object: string;
  /** The DLQ the finding concerns (a name from `dlqs`), when there is one. */
  dlq: string | null;
  /** Why it loses or risks letters. */
  why: string;
  /** How to fix it, concretely. */
  fix: string;
}
