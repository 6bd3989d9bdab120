/** Removing letters from a DLQ (discard) and putting archived ones back (republish): requests, options and results. */
import type { LetterCopy } from "@/lib/brokers/contract/letter";

/** One letter to remove from its DLQ (discard). */
export interface RemoveRequest {
  letterId: string;
  /** The checksum recorded when the letter was indexed; a letter whose bytes now differ is not removed. */
  sha256: string;
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
