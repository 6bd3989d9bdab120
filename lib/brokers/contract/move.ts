/** Moving letters out of a DLQ (redrive, repair and resubmit): requests, options and results. */
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { RedriveMarkers } from "@/lib/brokers/contract/markers";

/** Where a redriven letter goes. "origin": where it came from, derived per letter by the adapter (DESIGN.md, "origin"). */
export type RedriveTarget = { kind: "origin" } | { kind: "queue"; name: string };

/**
 * Repair and resubmit: what the copy of a letter carries instead of the letter as it is.
 * Everything not named here is kept byte for byte: body, properties, headers in their order and
 * types, broker history (x-death, kafka_dlt-*), the redrive markers as for any move. The console
 * checks edits against the locked fields before it asks (lib/repair); an adapter still refuses
 * ("failed", nothing published) an edit of a managed name: any broker's or the console's
 * (`AdapterSetup.allManagedHeaders`), not only its own.
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

export interface MoveRequest {
  letterId: string;
  /** The checksum recorded when the letter was indexed; a letter whose bytes now differ is not moved. */
  sha256: string;
  target: RedriveTarget;
  markers: RedriveMarkers;
  /**
   * Repair and resubmit: the copy carries these edits and a new message id (where producers choose
   * it: the new id is `markers.replayId`; SQS assigns its own), `x-dlq-repaired-by-operation`, and the
   * letter's original id as `x-dlq-original-message-id`. Needs `BrokerAdapter.repair` and
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

/**
 * Repair and resubmit, where a broker has it (`BrokerAdapter.repair`): its `moveLetters` applies
 * `MoveRequest.repair`. Where an adapter has no such object, the console refuses a repair before
 * anything is read.
 */
export interface RepairOps {
  /**
   * The letter id a repaired copy (`MoveResult.copyId`) will have in a DLQ of this connection if it
   * fails again and is dead-lettered, so the console can link the copy before it comes back
   * (RabbitMQ keeps the copy's message_id; SQS keeps its MessageId); null where that id is not
   * known in advance (Kafka and Pulsar: a new record with a new id).
   */
  copyLetterId(copyId: string): string | null;
  /**
   * Why this repair cannot be applied to any letter, in the operator's words, or null: a managed
   * name of any broker or of the console (the union the adapter was built with), or the broker's
   * own limits. moveLetters asks the same of every request and reports a refused one "failed".
   */
  refusal(repair: LetterRepair): string | null;
}
