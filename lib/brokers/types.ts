/**
 * The broker boundary. Everything above `lib/brokers` talks to these types only; nothing outside
 * this folder branches on broker kind. Adapters convert their client's types to these at the edge.
 */
import type { ConsumerGroupOps } from "@/lib/brokers/consumer-groups";
import type { SampleWatchOps } from "@/lib/brokers/target-readers";
import type { TailOps } from "@/lib/brokers/tail";
import { AppError, type ErrorCode } from "@/lib/errors";

export type BrokerKind = "rabbitmq" | "sqs" | "kafka" | "pulsar";

/** What an adapter can do; the UI reads these instead of asking which broker it is. */
export interface BrokerCapabilities {
  /** Finds DLQs beyond those named in config (may still fail at run time, e.g. no management API). */
  discovery: boolean;
  /** Reading hides letters from consumers for a while (SQS visibility timeout). */
  readHidesLetters: boolean;
  /** Each read counts as a delivery on every letter read (SQS receive count). Per-queue risks are in `DlqSummary.readRisk`. */
  readCountsAsDelivery: boolean;
  /** Letters can be reached by position directly (Kafka seek); otherwise reads stream from the head. */
  randomAccess: boolean;
  /** A single letter can be removed from the DLQ (false for Kafka: handled offsets are recorded instead). */
  perLetterRemoval: boolean;
  /** The broker can move a whole DLQ natively (SQS message move task, RabbitMQ shovel). */
  nativeBulkMove: boolean;
  /** Letters carry an ordering key (Kafka key, FIFO group) whose order matters on redrive. */
  orderedKeys: boolean;
  /** Pages list letters in the order they entered the DLQ, the same on every read. Absent means true (false: SQS standard queues). */
  stableOrder?: boolean;
  /** Payloads may be any bytes. Absent means true (false: SQS bodies are Unicode text). */
  binaryBodies?: boolean;
  /** Largest payload the broker accepts, in bytes. Absent means no limit worth stating. */
  maxBodyBytes?: number;
  /** Producers choose the message id (AMQP message_id). Absent means true (false: SQS assigns MessageId). */
  producerMessageIds?: boolean;
  /** What `republish` keeps of a discarded letter; each item an operator-worded note (empty: everything). */
  republishLimits?: string[];
  /**
   * The broker never confirms that a letter left the DLQ (AMQP 0-9-1 acks): a letter reported
   * moved by a move that then breaks off may still be in the DLQ, and the redrive engine looks for
   * it when the job resumes. Absent means false (SQS DeleteMessage answers; Kafka marks are rows).
   */
  removalUnconfirmed?: boolean;
  /** `planSafeMove` and `moveToSafety` exist: a risky DLQ's letters can be moved where reading is safe. Absent means false. */
  safeMove?: boolean;
  /**
   * `moveLetters` applies `MoveRequest.repair` (repair and resubmit). Absent means false:
   * the console then refuses a repair on this broker before anything is read.
   */
  repair?: boolean;
}

/** Words the UI uses for this broker's concepts. */
export interface BrokerVocabulary {
  queue: string; // "queue" | "topic"
  letterId: string; // "message id" | "offset"
  origin: string; // "origin queue" | "original topic"
}

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

export type ReadRiskKind = "delivery-limit" | "chained-dlq" | "unknown-queue-type";

/** A reason why reading this DLQ could cost letters; reading then needs an explicit, audited confirmation. */
export interface ReadRisk {
  kind: ReadRiskKind;
  message: string;
  /** e.g. the delivery limit. */
  limit?: number;
  /**
   * Where a letter read past the limit goes, when the broker moves it on rather than dropping it:
   * the queue (SQS: the DLQ's own redrive target) whose depth shows letters that moved during a
   * read. Null or absent: the letter is dropped for good (RabbitMQ quorum queue without a DLX of
   * its own) or its destination cannot be watched (a DLX exchange).
   */
  onwardQueue?: string | null;
  /**
   * Where reading counts against letters, the per-letter count a read raises, as the triage index
   * keeps it (`FailureInfo.deliveryCount` for x-delivery-count, `FailureInfo.count` for SQS
   * ApproximateReceiveCount). A letter without the count has a count of 0.
   */
  countField?: "deliveryCount" | "count";
  /**
   * With `countField`: a letter whose count, as the last read saw it, is at least this is lost to
   * the DLQ by the next read (RabbitMQ: limit - 1, since the read that saw it returned it once
   * more; SQS: limit, since the next receive is the one past it).
   */
  nextReadLosesAt?: number;
}

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

export interface DlqWarning {
  code: string;
  /** A few words for a badge ("no source queue"); `message` says the whole of it. */
  label: string;
  message: string;
}

export interface DlqSummary {
  connectionId: string;
  name: string;
  kind: BrokerKind;
  /** classic | quorum | stream | standard | fifo | topic | unknown */
  queueType: string;
  depth: number | null;
  inFlight: number | null;
  consumers: number | null;
  /** Queues or topics that dead-letter into this one, as far as the adapter can tell. */
  origins: string[];
  source: "config" | "discovered" | "config+discovered";
  readRisk: ReadRisk | null;
  warnings: DlqWarning[];
  /** Broker-specific facts worth showing (retention, arguments), already in display form. */
  facts: HeaderEntry[];
  /** Where `capabilities.randomAccess`: the DLQ's partitions, browsable one by one. */
  partitions?: PartitionSummary[];
}

/** One partition of a randomly accessible DLQ. Offsets are decimal text (64-bit exact). */
export interface PartitionSummary {
  partition: number;
  /** First offset still in the log. */
  start: string;
  /** Offset the next letter will get; letters = end - start. */
  end: string;
  letters: number;
  /** Letters in [start, end) the console has marked handled. */
  handled: number;
  /** Timestamp of the oldest letter not handled, ISO 8601 UTC; null when none. */
  oldestUnhandledAt: string | null;
}

export interface BrowseOptions {
  offset: number;
  limit: number;
  /** Bytes of each payload to keep; the rest is counted and hashed but not held. Default: all. */
  maxBodyBytes?: number;
  /** The caller confirmed the DLQ's `readRisk`. Without it, a risky read throws `confirmation_required:read`. */
  acceptRisk?: boolean;
  signal?: AbortSignal;
  /** Where `capabilities.randomAccess`: read only this partition (default: all, partition by partition). */
  partition?: number;
  /** With `partition`: start at this offset (decimal text) instead of the oldest (or newest) one. */
  fromOffset?: string;
  /** Where `capabilities.randomAccess`: "newest" pages backwards from the end. Default "oldest". */
  order?: "oldest" | "newest";
}

export interface LetterPage {
  letters: Letter[];
  offset: number;
  limit: number;
  /** More letters were present after this page when it was read. */
  hasMore: boolean;
  /** Depth observed at the start of the read. */
  depth: number | null;
  /** Echo of the random-access options the page was read with. */
  partition?: number | null;
  order?: "oldest" | "newest";
}

export interface StreamOptions {
  maxBodyBytes?: number;
  acceptRisk?: boolean;
  signal?: AbortSignal;
  /**
   * Called once, before a stream that ran to its end returns, when the adapter knows it did not
   * read every letter of the DLQ (letters held by another reader, letters the broker hands out only
   * after earlier ones are removed, a read limit). A scan then marks nothing gone.
   */
  onShortfall?: (s: StreamShortfall) => void;
}

/** Why a stream that ended did not read the whole DLQ, in words for the operator. */
export interface StreamShortfall {
  reason: string;
  /** Letters left unread, when the broker says how many. */
  unread: number | null;
}

/** Where a redriven letter goes. "origin": where it came from, derived per letter by the adapter (DESIGN.md, "origin"). */
export type RedriveTarget = { kind: "origin" } | { kind: "queue"; name: string };

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
 * Repair and resubmit: what the copy of a letter carries instead of the letter as it is.
 * Everything not named here is kept byte for byte: body, properties, headers in their order and
 * types, broker history (x-death, kafka_dlt-*), the redrive markers as for any move. The console
 * checks edits against the locked fields before it asks (lib/repair); an adapter still refuses
 * ("failed", nothing published) an edit of a name it manages itself (`isManagedHeaderName`).
 */
export interface LetterRepair {
  /** The whole new payload; absent: the body is kept byte for byte. */
  body?: Uint8Array;
  /**
   * Headers (SQS: message attributes) to set, as text values (String attributes on SQS). A name the
   * letter has keeps its place and takes the new value as a string; a new one is added at the end.
   */
  setHeaders?: Record<string, string>;
  /** Headers (message attributes) to drop. */
  removeHeaders?: string[];
  /**
   * A new correlation id where the operator asks for one (AMQP correlation_id; on SQS and Kafka, the
   * letter's `correlation-id`/`correlationId` header if it has one). Absent: kept.
   */
  correlationId?: string;
  /** The repair operation: carried as `x-dlq-repaired-by-operation`. */
  operationId: string;
  /**
   * The console decided not to send this letter (a group repair's patch does not fit it): the
   * adapter reports it "failed" with this reason in its place in the DLQ order, publishes nothing,
   * archives nothing, and holds back later letters of its ordering key as for any failure, so none
   * of them overtakes it.
   */
  refuse?: string;
}

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

export interface MoveRequest {
  letterId: string;
  /** The checksum recorded when the letter was indexed; a letter whose bytes now differ is not moved. */
  sha256: string;
  target: RedriveTarget;
  markers: RedriveMarkers;
  /**
   * Repair and resubmit: the copy carries these edits and a new message id (where producers choose
   * it: the new id is `markers.replayId`; SQS assigns its own), `x-dlq-repaired-by-operation`, and the
   * letter's original id as `x-dlq-original-message-id`. Needs `capabilities.repair` and
   * `MoveOptions.beforeRemove` (the original is archived before it leaves the DLQ).
   */
  repair?: LetterRepair;
}

export type MoveOutcome = "moved" | "failed" | "missing" | "checksum_mismatch";

export interface MoveResult {
  letterId: string;
  outcome: MoveOutcome;
  /** The resolved destination in the broker's words, e.g. "exchange orders.x, routing key orders", "queue demo-orders". */
  destination: string | null;
  /**
   * The queue or topic the copy was published to, by name (what `SampleWatchOps` looks at), when the
   * letter was moved or published; null when it went to something that is not one (a RabbitMQ
   * exchange route) or nothing was published.
   */
  target?: string | null;
  /** Operator-worded reason when the outcome is not "moved". */
  reason: string | null;
  orderingKey: string | null;
  /**
   * With "failed": the letter is most likely still in the DLQ but out of this call's reach (another
   * reader holds it hidden, or the look did not reach it), so asking again later may move it. A
   * redrive asks for such letters again before it ends.
   */
  retryLater?: boolean;
  /**
   * For a repaired letter that moved: the copy's identity at the target, as letters there are
   * identified (RabbitMQ: its new message id; SQS: the MessageId SQS gave it; Kafka: the record's
   * `<topic>/<partition>/<offset>`), so the letter page can link to it. Absent otherwise.
   */
  copyId?: string | null;
}

export interface MoveOptions {
  signal?: AbortSignal;
  acceptRisk?: boolean;
  /**
   * Ordering keys (as `MoveResult.orderingKey` gives them: Kafka key, SQS MessageGroupId) of which
   * an earlier letter failed, e.g. in an earlier call of the same redrive. Letters with one of these
   * keys are not moved ("failed", reason "Held back: an earlier letter with the same key failed …"),
   * so a key's letters are never moved past one that is still in the DLQ. Letters without a key
   * (all RabbitMQ letters) are never held.
   */
  heldKeys?: string[];
  /**
   * Letters published and not yet confirmed at once in this call: the crash window (a crash may
   * leave up to this many letters both at the target and in the DLQ, tagged). Larger windows move
   * faster where confirms are slow (RabbitMQ: throughput is about window ÷ confirm latency). Default:
   * the adapter's own (RabbitMQ `moveInFlight`, 64; Kafka `concurrency`, 16). SQS sends in batches of
   * 10, one batch at a time, and ignores it.
   */
  maxInFlight?: number;
  /**
   * Called for each letter after its copy was confirmed at the target and before the letter is
   * removed from the DLQ, one letter at a time, with the letter's complete copy as it was (the
   * original, not the repaired copy). Resolve once the copy is durable (the archive row committed).
   * If it throws, the letter stays in the DLQ and its result is "failed" with a reason that says the
   * copy was published (a duplicate, never a loss). Required when any request has `repair`.
   */
  beforeRemove?: (copy: LetterCopy) => Promise<void>;
}

/** One letter to remove from its DLQ (discard). */
export interface RemoveRequest {
  letterId: string;
  /** The checksum recorded when the letter was indexed; a letter whose bytes now differ is not removed. */
  sha256: string;
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

export interface RemoveOptions {
  /**
   * Called once per letter found with a matching checksum, one letter at a time in DLQ order (never
   * concurrently), with its complete copy. Resolve only once the copy is durable (e.g. the archive
   * row is committed): the letter is removed from the DLQ only after it resolves. If it throws, the
   * letter stays in the DLQ and its result is "failed" with the error's `userMessage` (an AppError)
   * or a generic reason (anything else; its message is not shown). It is called for no other
   * letter, and never for a letter that is then reported "missing" or "checksum_mismatch".
   */
  beforeRemove(copy: LetterCopy): Promise<void>;
  /**
   * The discard operation (a UUID). Kafka records each removed offset as handled under it (outcome
   * "discarded"), and `republish` clears only marks made by this operation.
   */
  operationId: string;
  signal?: AbortSignal;
  acceptRisk?: boolean;
  /**
   * Only letters with an identity of their own are removed. A request for a letter the broker
   * identifies by its content alone (a RabbitMQ letter without message id, whose twins answer for
   * it) is answered "failed" with the reason, and nothing is read for it. For the checks that remove
   * DLQ copies that may have come back after a lost acknowledgement: there, an identical twin that
   * was never moved could answer instead, and removing it would lose it.
   */
  ownIdentityOnly?: boolean;
}

export type RemoveOutcome = "removed" | "missing" | "checksum_mismatch" | "failed";

export interface RemoveResult {
  letterId: string;
  outcome: RemoveOutcome;
  /** Operator-worded reason when the outcome is not "removed". */
  reason: string | null;
  /** "failed" only because of `RemoveOptions.ownIdentityOnly`: the letter is known by its content alone and was not looked for. */
  contentIdentified?: true;
}

/** One archived letter to put back into the DLQ it was removed from. */
export interface RepublishRequest {
  /** The caller's id for this request (e.g. the archive row), echoed in the result. */
  id: string;
  /** `LetterCopy.envelope` exactly as `removeLetters` gave it. */
  envelope: Uint8Array;
  /** The whole body (`LetterCopy.letter.body`); its SHA-256 must match the one in the envelope. */
  body: Uint8Array;
}

export interface RepublishOptions {
  signal?: AbortSignal;
  /** Kafka: the discard operation (`RemoveOptions.operationId`) whose handled marks may be cleared. */
  operationId?: string;
}

export interface RepublishResult {
  id: string;
  outcome: "published" | "failed";
  /**
   * How it went back: "published" (a new copy was published and confirmed) or "restored" (Kafka:
   * the record was still in the log, its handled mark was cleared, so it is the same record again).
   * Null when failed.
   */
  how: "published" | "restored" | null;
  /** The letter's id in the DLQ now, where the broker tells it (Kafka: partition-offset; SQS: the new MessageId). Else null. */
  letterId: string | null;
  /** Operator-worded reason when failed. */
  reason: string | null;
}

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

export interface BrokerAdapter {
  readonly kind: BrokerKind;
  readonly connectionId: string;
  readonly displayName: string;
  readonly capabilities: BrokerCapabilities;
  readonly vocabulary: BrokerVocabulary;

  /** Configured plus discovered DLQs. A broker that is down throws `unavailable:broker`. */
  listDlqs(): Promise<DlqSummary[]>;
  /** One DLQ; throws `not_found:queue` when it does not exist. */
  describeDlq(name: string): Promise<DlqSummary>;
  /** One page of letters, without removing any from the DLQ. */
  browse(name: string, opts: BrowseOptions): Promise<LetterPage>;
  /** Every letter from the head, one at a time, in bounded memory; returns all letters to the DLQ when the iteration ends or is broken off. */
  stream(name: string, opts?: StreamOptions): AsyncIterable<Letter>;
  /** The letter with this id, or null when it is no longer in the DLQ. */
  getLetter(name: string, id: string, opts?: StreamOptions): Promise<Letter | null>;
  /**
   * Moves these letters out of the DLQ, each in turn: verify its checksum, publish it to its target
   * and wait for the broker's confirmation (RabbitMQ publisher confirm with mandatory + persistent,
   * a basic.return or nack being a failure; SQS SendMessage success; Kafka acks=all), and only then
   * remove it from the DLQ (ack; DeleteMessage; on Kafka, record its offset as handled). A failure
   * leaves the letter where it was; a crash between publish and removal may duplicate, never lose.
   * Letters not requested are untouched and keep their order. Letters sharing an ordering key are
   * moved in DLQ order, one at a time. Results are yielded as letters settle; `signal` stops the
   * move between letters. A DLQ or target that does not exist throws a typed BrokerError before
   * anything moves when that can be known up front, else yields "failed" per letter.
   */
  moveLetters(dlq: string, requests: MoveRequest[], opts?: MoveOptions): AsyncIterable<MoveResult>;
  /**
   * Discard (conservation first, DESIGN.md): removes these letters from the DLQ, each in turn: read
   * it, verify its checksum ("checksum_mismatch": nothing happens to it), hand its complete copy to
   * `opts.beforeRemove`, and only after that resolved remove it (RabbitMQ ack; SQS DeleteMessage;
   * Kafka: its offset recorded as handled with outcome "discarded" under `opts.operationId`). If
   * `beforeRemove` throws, the letter stays and the result is "failed". Letters not found are
   * "missing". Letters not requested are untouched and keep their order. A crash after
   * `beforeRemove` and before the removal leaves the letter in the DLQ AND in the archive (never
   * lost). A DLQ that does not exist throws `not_found` before anything is read.
   */
  removeLetters(dlq: string, requests: RemoveRequest[], opts: RemoveOptions): AsyncIterable<RemoveResult>;
  /**
   * Undo of a discard: puts each archived letter back into `dlq`, body bytes, message id,
   * correlation id and headers/attributes as they were, and yields "published" only once the broker
   * confirmed it (RabbitMQ confirm channel, mandatory + persistent; SQS SendMessage success; Kafka
   * idempotent producer, acks=all). What cannot be kept is listed per adapter in
   * `capabilities.republishLimits`. Kafka: a record still in the log is restored by clearing its handled
   * mark (same offset, same letter); one deleted by retention is produced again. A DLQ that does not
   * exist throws `not_found` before anything is published; an envelope of another broker kind or a
   * body that does not match it is "failed".
   */
  republish(dlq: string, requests: RepublishRequest[], opts?: RepublishOptions): AsyncIterable<RepublishResult>;
  /**
   * Where `capabilities.safeMove`: how this DLQ's letters would be moved to safety (the target
   * queue, whether it exists, the permissions needed). Changes nothing; reads no letter.
   * Throws `not_found` for a DLQ that does not exist.
   */
  /**
   * Where `capabilities.repair`: the letter id a repaired copy (`MoveResult.copyId`) will have in a
   * DLQ of this connection if it fails again and is dead-lettered, so the console can link the copy
   * before it comes back (RabbitMQ keeps the copy's message_id; SQS keeps its MessageId). Absent
   * where that id is not known in advance (Kafka: a new record at a new offset).
   */
  copyLetterId?(copyId: string): string | null;
  /** Consumer groups and their committed offsets (Kafka; lib/brokers/consumer-groups.ts). Absent on other brokers. */
  readonly consumerGroups?: ConsumerGroupOps;
  /** Who reads a redrive target and whether a sample's copies were taken (lib/brokers/target-readers.ts). */
  readonly sampleWatch?: SampleWatchOps;
  /** Reads only the letters after remembered positions, at no cost to them (lib/brokers/tail.ts). Absent where reads start at the head. */
  readonly tail?: TailOps;
  planSafeMove?(dlq: string): Promise<SafeMovePlan>;
  /**
   * Where `capabilities.safeMove`: moves every letter that is in `dlq` when the call starts into
   * `plan.target` (created when missing, as a queue that reading does not harm), conserving: each
   * letter is published to the target and confirmed by the broker before it leaves the DLQ; bytes,
   * message id, properties, headers and broker history are kept exactly; no redrive marker is
   * added. Each letter is read at most once, and a letter that moved is never returned to the DLQ
   * (so the read costs it nothing); one whose move failed stays in the DLQ. `signal` stops between
   * letters. Runs until the letters present at the start are moved, or the DLQ is empty.
   */
  moveToSafety?(dlq: string, target: string, opts?: { signal?: AbortSignal }): AsyncIterable<SafeMoveEvent>;
  /** The sampler's look at every DLQ and the configuration checks (see `BrokerInspection`). */
  inspect(opts: InspectOptions): Promise<BrokerInspection>;
  /** Cheap reachability check. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type BrokerErrorKind =
  | "unreachable"
  | "auth"
  | "not_found"
  | "throttled"
  | "risky_read"
  | "bad_request"
  | "protocol";

const CODES: Record<BrokerErrorKind, ErrorCode> = {
  unreachable: "unavailable:broker",
  auth: "forbidden:broker",
  not_found: "not_found:queue",
  throttled: "unavailable:throttled",
  risky_read: "confirmation_required:read",
  bad_request: "bad_request:broker",
  protocol: "internal:broker",
};

/** Typed failure from an adapter; `userMessage` is written for the operator. */
export class BrokerError extends AppError {
  readonly kind: BrokerErrorKind;
  constructor(
    kind: BrokerErrorKind,
    opts: { message?: string; userMessage: string; cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(CODES[kind], opts);
    this.name = "BrokerError";
    this.kind = kind;
  }
}
