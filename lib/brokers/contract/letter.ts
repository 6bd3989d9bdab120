/**
 * A letter as every adapter hands it over: its bytes, headers and properties in display form,
 * why and where it died, and the complete copy a discard archives.
 */

/**
 * A header or property value, tagged so it survives JSON and the React server/client boundary
 * without losing its type. Bytes keep their exact content (base64); `text` is set when they are
 * valid UTF-8.
 */
export type DisplayValue =
  | { t: "string"; v: string }
  | { t: "number"; v: string } // decimal text: keeps 64-bit integers exact
  | { t: "boolean"; v: boolean }
  | { t: "null" }
  | { t: "timestamp"; v: string } // ISO 8601 UTC
  | { t: "bytes"; v: string; size: number; text?: string }
  | { t: "array"; v: DisplayValue[] }
  | { t: "table"; v: Array<[string, DisplayValue]> };

export interface HeaderEntry {
  name: string;
  value: DisplayValue;
}

/** One dead-lettering event in a letter's history (an x-death entry; SQS and Kafka have at most one). */
export interface DeathRecord {
  queue: string | null;
  reason: string | null;
  count: number | null;
  time: string | null; // ISO 8601 UTC
  exchange: string | null;
  routingKeys: string[];
  /** Any further fields of the entry, e.g. original-expiration. */
  extra: HeaderEntry[];
}

/** Why and where a letter died, normalised across brokers. Absent facts are null, never guessed. */
export interface FailureInfo {
  deadLetteredAt: string | null; // ISO 8601 UTC
  reason: string | null; // rejected | expired | maxlen | delivery_limit | maxReceiveCount | exception ...
  originQueue: string | null;
  exchange: string | null;
  routingKeys: string[];
  /** How many times it died or was received (x-death count, ApproximateReceiveCount). */
  count: number | null;
  deliveryCount: number | null; // x-delivery-count
  /** The exception that caused the failure: where a framework wrapped it, the cause, not the wrapper. */
  exceptionClass: string | null;
  exceptionMessage: string | null;
  stackTrace: string | null;
  /**
   * The framework's wrapper when `exceptionClass` is its cause (Spring Kafka's
   * ListenerExecutionFailedException, named in kafka_dlt-exception-fqcn). Absent: no wrapper recorded.
   */
  wrapperClass?: string | null;
}

export interface Letter {
  /** Stable across reads and URL-safe: message id when set, else a content fingerprint, plus an occurrence suffix for identical letters. */
  id: string;
  /** 0-based position in the DLQ at the time of the read. */
  position: number;
  messageId: string | null;
  correlationId: string | null;
  /** The payload as read, possibly cut to the requested maximum; `bodySize` is the whole size. */
  body: Uint8Array;
  bodySize: number;
  bodyTruncated: boolean;
  /** SHA-256 (hex) of the whole payload. */
  sha256: string;
  contentType: string | null;
  contentEncoding: string | null;
  /** Broker-native properties other than headers (AMQP properties, SQS attributes, Kafka key/partition/offset). */
  properties: HeaderEntry[];
  headers: HeaderEntry[];
  failure: FailureInfo;
  /** Most recent first. */
  history: DeathRecord[];
  /** Ordering key where the broker has one (Kafka key, FIFO group), else null. */
  orderingKey: string | null;
  /**
   * When the broker's retention clock for this letter started, where that differs from when it
   * entered the DLQ and the broker tells it (SQS: SentTimestamp, which a standard queue keeps from
   * the first enqueue). ISO 8601 UTC. Absent: the letter's time in the DLQ is what counts.
   */
  retentionFrom?: string | null;
  /**
   * Where the read that returned this letter raised one of its counts (SQS: every receive raises
   * ApproximateReceiveCount, FailureInfo.count), which and by how much; the count shown includes it.
   */
  readRaised?: { field: "count" | "deliveryCount"; by: number };
  /** Set when the console already handled this letter but the broker keeps it (Kafka: no per-record delete). */
  handled?: { at: string; outcome: "redriven" | "discarded" };
  /** Problems found in this letter that did not stop the read (e.g. an SQS MD5 mismatch). */
  warnings?: DlqWarning[];
}

export interface DlqWarning {
  code: string;
  /** A few words for a badge ("no source queue"); `message` says the whole of it. */
  label: string;
  message: string;
}

/**
 * A complete copy of a letter, handed to `RemoveOptions.beforeRemove` before the letter leaves the
 * DLQ: what the console's archive keeps, and what `republish` needs to put the letter back.
 */
export interface LetterCopy {
  letterId: string;
  /** The whole letter as browse shows it; `body` is never truncated here (`bodyTruncated` is false). */
  letter: Letter;
  /**
   * Opaque, broker-specific and versioned: everything except the body that `republish` needs to
   * publish the letter again exactly (RabbitMQ: the raw AMQP basic.properties bytes, exchange and
   * routing key it was delivered with; SQS: message attributes, AWSTraceHeader, FIFO group and
   * deduplication ids; Kafka: topic, partition, offset, key, headers in order, timestamp). It also
   * records the body's SHA-256 and size, which `republish` checks. Store it byte for byte. It holds
   * the letter's headers, which may be as sensitive as the payload: keep it encrypted at rest too.
   */
  envelope: Uint8Array;
}
