/**
 * Who reads a redrive target, and whether a sample's copies were taken by a reader: the evidence
 * behind a sample verdict. A sample is "clean" only when a reader took the copies and none came
 * back (DESIGN.md, "What the console claims"); copies that nobody read prove nothing.
 *
 * Per broker (`BrokerAdapter.sampleWatch`; each file's header says what its counters can and cannot prove):
 * - RabbitMQ (rabbitmq/sample-watch.ts): the consumers on the target queue. The copies were taken
 *   when, in statistics newer than the mark, the queue held nothing (0 ready, 0 unacknowledged), or
 *   its consumers acknowledged (or took without ack) at least as many messages as it held at the
 *   mark. The management API's figures are up to one queue emission plus one collection tick old
 *   (5 s each by default) and nothing in them says how old (its samples' timestamps are carried
 *   forward to the time of the request), so `mark` waits a fixed 11 s before it reads its baseline
 *   (not for a stream, whose evidence is always "unknown"); without the management API
 *   acknowledgements cannot be seen and the evidence is "unknown" once everything was delivered.
 *   Counters do not name messages: the count rule holds for a queue that delivers and is
 *   acknowledged in order.
 * - SQS (sqs/sample-watch.ts): SQS keeps no list of receivers (count null, never "no_reader": no
 *   sign of a receiver is "unknown"). The copies were taken only when a look after the mark finds
 *   the queue empty (visible, in flight and delayed all 0): its counts mix deletions with arrivals,
 *   so a falling count is "waiting". On AWS an empty count is believed 60 s after the mark (the
 *   counts are approximate); on an emulator at once.
 * - Kafka (kafka/sample-watch.ts): consumer groups with committed offsets on the target topic or
 *   members assigned to it; the copies were taken when one group committed at or past the mark's
 *   end offsets on every partition that held records (which partition got a copy is not known).
 *   Groups with no member (and not commit-only groups) read nothing now: "no_reader".
 * - Pulsar (pulsar/sample-watch.ts): the durable subscriptions on the target topic (each
 *   partition); the copies were taken when a subscription that existed at the mark has its
 *   mark-delete position at or past each partition's last confirmed entry at the mark.
 *   Subscriptions with no consumer connected read nothing now: "no_reader".
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
  /**
   * Where the target stands now; taken right after the sample's copies were confirmed. It can take
   * seconds (RabbitMQ with the management API waits about 11 s for its statistics to pass the mark).
   */
  mark(target: string): Promise<WatchMark>;
  /** Whether a reader has taken everything that was in the target at `mark`, and who reads it. */
  evidence(target: string, mark: WatchMark): Promise<SampleEvidence>;
}
