/**
 * Which broker an adapter speaks for, what it can do and the words the UI uses for its concepts.
 * The UI reads capabilities instead of asking which broker it is.
 */

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
  /** Pages list letters in the order they entered the DLQ, the same on every read (false: SQS standard queues). */
  stableOrder: boolean;
  /** Payloads may be any bytes (false: SQS bodies are Unicode text). */
  binaryBodies: boolean;
  /** Largest payload the broker accepts, in bytes; null: no limit worth stating. */
  maxBodyBytes: number | null;
  /** Producers choose the message id (AMQP message_id; false: SQS and Pulsar assign it). */
  producerMessageIds: boolean;
  /** What `republish` keeps of a discarded letter; each item an operator-worded note (empty: everything). */
  republishLimits: string[];
  /**
   * The broker never confirms that a letter left the DLQ (AMQP 0-9-1 acks): a letter reported
   * moved by a move that then breaks off may still be in the DLQ, and the redrive engine looks for
   * it when the job resumes (false: SQS DeleteMessage answers; Kafka marks are rows).
   */
  removalUnconfirmed: boolean;
}

/**
 * The flags of the optional features, derived from the adapter's objects of operations
 * (`capabilitiesOf`, contract/adapter.ts): a feature is there exactly when its object is.
 */
export interface FeatureFlags {
  /** `BrokerAdapter.safeMove` is there: a risky DLQ's letters can be moved where reading is safe. */
  safeMove: boolean;
  /** `BrokerAdapter.repair` is there: `moveLetters` applies `MoveRequest.repair` (repair and resubmit). */
  repair: boolean;
  /** `BrokerAdapter.consumerGroups` is there: consumer groups and their committed offsets. */
  consumerGroups: boolean;
}

/** What the UI reads of a connection: the adapter's capabilities and its optional features. */
export type ConnectionCapabilities = BrokerCapabilities & FeatureFlags;

/** Words the UI uses for this broker's concepts. */
export interface BrokerVocabulary {
  queue: string; // "queue" | "topic"
  letterId: string; // "message id" | "offset"
  origin: string; // "origin queue" | "original topic"
}
