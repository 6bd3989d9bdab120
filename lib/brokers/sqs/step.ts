/**
 * What the SQS walk (walk.ts) works with, and what move (mover.ts) and discard (remove.ts) plug
 * into it: the adapter's context, the DLQ as opened, a letter found for a request, a letter ready to
 * be delivered, how a delivery went, and how a request settled. Types only.
 */
import type { Message, SQSClient } from "@aws-sdk/client-sqs";
import type { BrokerError } from "@/lib/brokers/contract/errors";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import type { ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { MoveVerb } from "@/lib/brokers/move-rules";
import type { SortKey } from "@/lib/brokers/sqs/letter";
import type { Attrs } from "@/lib/brokers/sqs/summary";

export interface SqsMoveContext {
  sqs: SQSClient;
  /** Describes the DLQ with the read-risk guard (acceptRisk) and the in-flight room. */
  open(): Promise<{ url: string; attrs: Attrs; summary: DlqSummary; room: number }>;
  /** Queue URL by name (and owner account); throws BrokerError not_found. */
  urlOf(name: string, account?: string): Promise<string>;
  queueAttrs(name: string, url: string): Promise<Attrs>;
  err(e: unknown, queue?: string): BrokerError;
  region: string;
  /** Seconds a letter stays hidden after receive and after each refresh (see moveVisibilitySeconds). */
  visibilityTimeout: number;
  receiveConcurrency: number;
  maxEmptyReceives: number;
  maxScan: number;
  /** Largest SendMessageBatch payload (sum of the entries), bytes. */
  maxBatchBytes: number;
  /** Letters per SendMessageBatch (1..10, default 10). */
  sendBatchSize?: number;
  /** How letters are shown (for the copies a discard hands over), once `open` has run. Default: no origin known. */
  letterOptions?(): { soleSource: string | null; configOrigin: string | null };
  /** Every broker's and the console's managed header names: a repair that names one is refused. */
  isManagedHeader: ManagedHeaderMatcher;
}

export interface Opened {
  url: string;
  attrs: Attrs;
  summary: DlqSummary;
  room: number;
  dlqFifo: boolean;
  dlqArn: { region: string; account: string; name: string } | null;
}

/** A requested letter as received from the DLQ (held by its receipt handle). */
export interface Found<R> {
  req: R;
  m: Message;
  key: SortKey;
  /** sha256 of the body as received, hex. */
  sha256: string;
}

/** A letter ready to be delivered, batched with others of the same `batchKey`. */
export interface Ready<R, P> {
  f: Found<R>;
  batchKey: string;
  /** Delivered alone and in order (FIFO). */
  single: boolean;
  size: number;
  payload: P;
  destination: string | null;
  /** The queue a copy goes to (`MoveResult.target` once it was sent); null for a discard. */
  target: string | null;
}

/**
 * How one delivery went. `note` is what the step's `notDeleted` is told (a new MessageId); `sent`
 * on a failure: a copy was published before it failed (a repaired copy whose archive threw).
 */
export type Delivered = { ok: true; note: string; copyId?: string } | { ok: false; reason: string; sent?: boolean };

/** How one requested letter settled in the walk; callers turn it into their own result type. */
export interface Settled<R> {
  req: R;
  outcome: "done" | "failed" | "missing" | "checksum_mismatch";
  destination: string | null;
  /** The queue a copy was sent to, else null. */
  target: string | null;
  reason: string | null;
  orderingKey: string | null;
  /** What the delivery reported for a letter that settled "done" (a repaired copy's new MessageId). */
  copyId?: string;
  /** "failed" because the letter was out of the look's reach (hidden by another reader, not reached): worth asking again later. */
  retryLater?: boolean;
}

/** What move and remove plug into the walk. */
export interface SqsStep<R extends { letterId: string; sha256: string }, P> {
  /** What the call does to a letter, for the operator's words (move-rules' moveWords). */
  verb: MoveVerb;
  /** Checks after the DLQ is opened and before anything is received (typed errors). */
  before?(d: Opened): Promise<void>;
  /** Per found letter, after its checksum matched: why it stays, or what to deliver. */
  prepare(
    f: Found<R>,
    d: Opened,
  ): Promise<{ stays: { reason: string; destination: string | null } } | Omit<Ready<R, P>, "f">>;
  /** Delivers a batch (one batchKey); one result per letter, in order. A fatal error stops the walk. */
  deliver(batch: Array<Ready<R, P>>): Promise<{ results: Delivered[]; fatal: BrokerError | null }>;
  /** The reason when the delivery succeeded but the DeleteMessage failed (the letter is now in two places). */
  notDeleted(r: Ready<R, P>, note: string, code: string): string;
  /** Letters of these ordering keys are held back (MoveOptions.heldKeys). */
  heldKeys: readonly string[];
  /** A letter that stays holds back the later letters of its FIFO group in the call (redrive keeps group order). */
  keepsGroupOrder: boolean;
}
