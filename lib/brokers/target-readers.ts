/**
 * Who reads a redrive target, and whether a sample's copies were taken by a reader: the evidence
 * behind a sample verdict. A sample is "clean" only when a reader took the copies and none came
 * back (DESIGN.md, "What the console claims"); copies that nobody read prove nothing.
 *
 * Per broker (`BrokerAdapter.sampleWatch`):
 * - RabbitMQ: the consumers on the target queue; the copies were taken when the queue delivered and
 *   had acknowledged at least everything that was in it when the sample's copies were confirmed.
 * - SQS: SQS keeps no list of receivers; the copies were taken when the queue no longer holds
 *   what it held when they were confirmed (visible, in flight and delayed counts).
 * - Kafka: consumer groups with committed offsets on the target topic; the copies were taken when a
 *   group committed past the topic's end offsets as they were when the copies were confirmed.
 * - Pulsar: the subscriptions on the target topic; the copies were taken when a subscription
 *   acknowledged past the topic's last message as it was when the copies were confirmed.
 */

/** Who reads a target, as the broker tells it. Shown on the redrive form before a sample starts. */
export interface TargetReaders {
  /** The queue or topic, as `MoveResult.target` names it. */
  target: string;
  /** How many readers the broker reports; null when it cannot tell (SQS keeps no list of receivers). */
  count: number | null;
  /**
   * Each reader in the broker's words, at most 20 ("consumer amq.ctag-… (prefetch 10)", "group
   * orders-svc, committed on 3 of 3 partitions", "subscription orders (Shared, 2 consumers)").
   */
  names: string[];
  /** One sentence for the form, with figures: "2 consumers on queue \"demo.orders\"." */
  summary: string;
}

/**
 * Where a target stood right after a sample's copies were confirmed there (end offsets, depth,
 * delivered counters): opaque to the engine, kept as JSON with the job so a restarted watch can
 * still judge against it.
 */
export type WatchMark = Record<
  string,
  string | number | boolean | null | Array<string | number> | Record<string, number | string>
>;

export type EvidenceState =
  /** A reader took every copy (the copies left the queue; a group or subscription is past them). */
  | "taken"
  /** Someone reads the target, but the copies may still be waiting there unread. */
  | "waiting"
  /** Nobody reads the target: the copies cannot come back, and their not coming back proves nothing. */
  | "no_reader"
  /** The broker cannot say (a target that is not a queue or topic, or a look that failed: `text` says why). */
  | "unknown";

/** What a look at the target after the watch found. */
export interface SampleEvidence {
  target: string;
  state: EvidenceState;
  /** The evidence in the operator's words, with the figures seen. */
  text: string;
  readers: TargetReaders;
}

/**
 * The sample watch's looks at a target. Reads only counters and positions, never a message: a
 * look takes nothing from the target's consumers. A target that does not exist throws the
 * adapter's `not_found`.
 */
export interface SampleWatchOps {
  /** Who reads this target now. */
  readers(target: string): Promise<TargetReaders>;
  /** Where the target stands now; taken right after the sample's copies were confirmed. */
  mark(target: string): Promise<WatchMark>;
  /** Whether a reader has taken everything that was in the target at `mark`, and who reads it. */
  evidence(target: string, mark: WatchMark): Promise<SampleEvidence>;
}
