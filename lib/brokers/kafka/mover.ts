/**
 * Redrive on Kafka (`BrokerAdapter.moveLetters`): each requested DLT record is fetched by its
 * offset (random access, no consumer group), checked, produced to its target with an idempotent
 * producer and acks=all, and only after the produce is acknowledged recorded as handled in Postgres
 * (Kafka cannot delete one record: the handled-offset ledger is the "removal").
 *
 * Decisions (see also the report of the change that added this file):
 * - Bytes: key and value are produced exactly as read; every original header is kept, in the order
 *   kafkajs decoded it (headers of one name stay together, in their order), Spring's `kafka_dlt-*`
 *   and Connect's `__connect.errors.*` included, so the failure history travels with the letter.
 *   The four REDRIVE_HEADERS are replaced (one value each, never appended). A header without value
 *   (e.g. Kafka Streams' null exception message) cannot be written by kafkajs 2.2.4: such a letter
 *   is "failed" rather than sent with changed headers.
 * - Timestamp: not copied. The producer stamps the redriven record with the time of the redrive
 *   (CreateTime = now; LogAppendTime topics stamp it themselves). A copied, old timestamp would make
 *   the target's time-based retention delete the record early, and windowed consumers (Kafka
 *   Streams grace periods) drop it as late. The original time stays readable: the DLT record keeps
 *   it, and Spring's `kafka_dlt-original-timestamp` header travels with the letter.
 * - Partition: not copied. The producer's default partitioner (murmur2 of the key, the same as the
 *   Java client's) chooses, so a keyed record lands where the target's producers put that key and
 *   per-key order holds on the target. Keyless records are spread round-robin.
 * - Redrive count: the larger of the caller's count and the record's own `x-dlq-redrive-count` + 1.
 * - Original message id: the record's own `x-dlq-original-message-id` (an earlier cycle's marker)
 *   wins; else the caller's `markers.originalMessageId`; else `<dlt>-<partition>-<offset>` of this
 *   DLT record (the first DLT record the letter was in: later cycles carry the marker).
 * - Order: records are taken in DLT order (partition, then offset). Records with the same key
 *   (exact bytes) are produced one at a time, each after the previous one's ack; keyless records
 *   of one DLT partition likewise (their order on a one-partition target is all there is).
 *   Different keys are pipelined, at most `concurrency` letters (and about `windowBytes`) at once.
 *   When a letter fails or its checksum no longer matches, later letters of the same key in the same
 *   call are held back ("failed"): moving them would put them ahead of it.
 * - Already handled offsets are "missing" and never produced twice by the console's own records.
 * - Crash window: produce acknowledged, then a crash (or a database failure) before `markHandled`:
 *   the offset is still unhandled, and a later redrive of it makes a duplicate on the target. The
 *   duplicate is recognisable: a new `x-dlq-replay-id` with the same `x-dlq-original-message-id`,
 *   and the redrive job's ledger knows the letter was published. Never a loss.
 * - A topic the producer wrote to and someone else deleted no longer fails the sends to the others
 *   (`readyFor`, before each send: Metadata requests only, the record is handed to kafkajs once).
 * - Producer errors (record too large, no Write permission, ...) leave the offset unhandled and
 *   yield "failed" with a reason; a broker that stops answering also stops the move (after the
 *   letters in flight settle) with a typed `unreachable` error, so a job can pause.
 * - Repair (`MoveRequest.repair`, issue 18): the same walk; the copy's value and headers are edited
 *   as repair.ts says, the key, timestamp and partition rules are those above. After the produce is
 *   acknowledged the original's complete copy goes to `opts.beforeRemove` (one letter at a time),
 *   and only after that resolved is the offset marked handled, "redriven" under the job's id (the
 *   outcome is a database enum without "repaired"). `copyId` is `<topic>/<partition>/<offset>`.
 */
import { isUtf8 } from "node:buffer";
import type { IHeaders, Message, Producer, RecordMetadata } from "kafkajs";
import { AppError, isAppError } from "@/lib/errors";
import {
  BrokerError,
  REDRIVE_HEADERS,
  REPAIR_HEADER,
  heldBackReason,
  type LetterCopy,
  type MoveOptions,
  type MoveRequest,
  type MoveResult,
  type RedriveMarkers,
  type RemoveOptions,
  type RemoveRequest,
  type RemoveResult,
} from "@/lib/brokers/types";
import { b64, beforeRemoveFailure, encodeEnvelope } from "@/lib/brokers/envelope";
import type { InternalProducerCluster, InternalRecord } from "@/lib/brokers/kafka/client";
import { parseLetterId } from "@/lib/brokers/kafka/discovery";
import { decodeKafkajsHeaders, originOf } from "@/lib/brokers/kafka/headers";
import { sha256Of, toLetter } from "@/lib/brokers/kafka/letter";
import { archiveFailure, copyIdOf, repairHeaders, repairProblem } from "@/lib/brokers/kafka/repair";
import {
  isShareDeadLetter,
  joinOriginal,
  originalGoneReason,
  originalRef,
  type OriginalLookup,
  type RecordData,
} from "@/lib/brokers/kafka/share-dlq";
import {
  markApplies,
  refKey,
  type HandledMark,
  type HandledOutcome,
  type HandledStore,
  type RecordRef,
  type TopicRef,
} from "@/lib/brokers/kafka/handled-store";

/** What the mover needs from the adapter (and what unit tests fake). */
export interface MoverDeps {
  connectionId: string;
  /** The broker's name in messages, e.g. "127.0.0.1:9092". */
  endpoint: string;
  store: HandledStore | null;
  /** Throws `not_found` when `dlq` is not a DLT the console knows. */
  assertDlq(dlq: string): Promise<void>;
  /**
   * The DLT as the handled store keys it (name and current topic id). Asked once per walk, before
   * any record is read; without it marks are keyed by name alone (unit-test fakes).
   */
  topicKey?(dlq: string): Promise<TopicRef>;
  /** Start and end offsets of every partition of the DLT, now. */
  partitions(dlq: string): Promise<Array<{ partition: number; start: bigint; end: bigint }>>;
  /** Records of [from, to) of one partition, in offset order (committed records only). */
  readRecords(dlq: string, partition: number, from: bigint, to: bigint): AsyncIterable<InternalRecord>;
  /** The topic exists (admin metadata); other failures throw. */
  topicExists(topic: string): Promise<boolean>;
  /**
   * Produces one record with acks=all on the idempotent producer; resolves when acknowledged, with
   * where the record was written when the client says (a repaired copy's `copyId` needs it).
   */
  produce(topic: string, message: Message): Promise<{ partition: number; offset: string } | undefined>;
  /** The configured origin of this DLT, if any. */
  configOrigin(dlq: string): string | null;
  /** Any failure → a typed BrokerError. */
  mapError(e: unknown, topic?: string): BrokerError;
  /**
   * The original record of a share-group dead letter (KIP-1191) while its topic retains it: a
   * redrive publishes the original's key, value and headers. Absent: the DLQ record as it is.
   */
  originalOf?(ref: { topic: string; partition: number; offset: bigint }): Promise<OriginalLookup>;
  /** Letters in flight at once (default 16). */
  concurrency?: number;
  /** Bytes of fetched letters held at once (default 16 MiB; one larger letter alone still goes). */
  windowBytes?: number;
  /** Offsets between two requested ones read through rather than fetched apart (default 8). */
  maxGap?: number;
  /** Offsets per Fetch run (default 500). */
  maxRun?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MARKER_NAMES = new Set<string>(Object.values(REDRIVE_HEADERS));

/** What `lazyProducer` is given: kafkajs's producer and its internal cluster (`createProducerWithCluster`). */
export interface ProducerHandle {
  producer: Producer;
  cluster: InternalProducerCluster;
}

/**
 * Redrive's producer (idempotent, acks=all; the adapter configures it), connected on first use and
 * shared by every move and undo of the adapter, several at once.
 * - `send` first makes the producer's metadata ready for the topic (`readyFor`: Metadata requests
 *   only), then hands the record to kafkajs once. A send that fails is not sent again here: kafkajs
 *   retries a Produce itself with the same producer id and sequence numbers, which the broker
 *   deduplicates, but a second `send` of the same record would get new ones and could make a
 *   duplicate when the first one's outcome is unknown.
 * - `close` stops handing out the producer, waits for the sends in flight on it to settle, then
 *   disconnects it: a disconnect under a send could lose the acknowledgement of a record written.
 */
export function lazyProducer(create: () => ProducerHandle) {
  interface Current {
    ready: Promise<ProducerHandle>;
    sends: Set<Promise<unknown>>;
  }
  let cur: Current | null = null;
  const current = (): Current => {
    if (cur) return cur;
    const c: Current = {
      // Deferred so that `cur` is set before a failure can clear it.
      ready: Promise.resolve().then(async () => {
        const h = create();
        await h.producer.connect();
        return h;
      }),
      sends: new Set(),
    };
    c.ready.catch(() => {
      if (cur === c) cur = null;
    });
    cur = c;
    return c;
  };
  return {
    /** Produces one record to `topic` (acks=all); resolves with kafkajs's metadata once the broker acknowledged it. */
    async send(topic: string, message: Message): Promise<RecordMetadata[]> {
      const c = current();
      const sending = (async () => {
        const { producer, cluster } = await c.ready;
        await readyFor(cluster, topic);
        return producer.send({ topic, acks: -1, messages: [message] });
      })();
      c.sends.add(sending);
      try {
        return await sending;
      } finally {
        c.sends.delete(sending);
      }
    },
    async close() {
      const c = cur;
      cur = null;
      if (!c) return;
      await Promise.allSettled([...c.sends]);
      await c.ready.then((h) => h.producer.disconnect()).catch(() => undefined);
    },
  };
}

const isUnknownTopic = (e: unknown) => errorChain(e).some((l) => l.type === "UNKNOWN_TOPIC_OR_PARTITION");
const unknownTopic = (topic: string) =>
  Object.assign(new Error(`Topic ${topic} is not in the broker's metadata`), { type: "UNKNOWN_TOPIC_OR_PARTITION" });

/**
 * Makes a producer's metadata ready for a send to `topic`, before kafkajs is given the record.
 * kafkajs refreshes a client's metadata for every topic it was ever given (its target topics); once
 * someone else deletes one of them, each refresh fails with UNKNOWN_TOPIC_OR_PARTITION whatever topic
 * is asked, so one deleted topic would fail every send to a topic new to the producer, and to every
 * topic once the metadata is older than metadataMaxAge. As the adapter's `onTopic` does for reading:
 * on an unknown topic, the target topics missing from a fresh list of all topics are dropped (under
 * kafkajs's own lock on them), the metadata is refreshed, and the check runs once more. Only
 * Metadata requests are made here: repeating them produces nothing. A `topic` that is itself gone
 * throws an UNKNOWN_TOPIC_OR_PARTITION error (produceFailure: "does not exist (any more)").
 */
export async function readyFor(c: InternalProducerCluster, topic: string): Promise<void> {
  const check = async () => {
    await c.addTargetTopic(topic);
    await c.refreshMetadataIfNecessary();
    // Every topic has a partition: none means the metadata does not know the topic.
    if (!c.findTopicPartitionMetadata(topic).length) throw unknownTopic(topic);
  };
  try {
    return await check();
  } catch (e) {
    if (!isUnknownTopic(e)) throw e;
  }
  const existing = new Set((await c.metadata()).topicMetadata.map((t) => t.topic));
  if (!existing.has(topic)) throw unknownTopic(topic);
  // Held across the refresh, as kafkajs holds it when it adds a topic: no add can put a dropped
  // topic back meanwhile, and the refresh cannot join one started with the old list by an add.
  await c.mutatingTargetTopics.acquire();
  try {
    for (const t of [...c.targetTopics]) if (!existing.has(t)) c.targetTopics.delete(t);
    await c.refreshMetadata();
  } finally {
    await c.mutatingTargetTopics.release();
  }
  await check();
}

const textOf = (v: unknown): string | null => {
  const one = Array.isArray(v) ? v[v.length - 1] : v;
  if (one === null || one === undefined) return null;
  const buf = Buffer.isBuffer(one) ? one : one instanceof Uint8Array ? Buffer.from(one) : Buffer.from(String(one));
  return isUtf8(buf) ? buf.toString("utf8") : null;
};

/**
 * The headers of the redriven record: every original header (same values, same order) except the
 * four markers, which are set once each at the end. Throws on a header without value (kafkajs
 * cannot write one).
 */
export function redriveHeaders(
  original: Record<string, unknown> | undefined,
  markers: RedriveMarkers,
  self: { topic: string; partition: number; offset: string },
): IHeaders {
  const out: IHeaders = {};
  let previousCount = 0;
  let previousOriginal: string | null = null;
  for (const name of Object.keys(original ?? {})) {
    const v = original![name];
    if (name === REDRIVE_HEADERS.redriveCount) {
      const n = Number(textOf(v));
      if (Number.isSafeInteger(n) && n > 0) previousCount = n;
      continue;
    }
    if (name === REDRIVE_HEADERS.originalMessageId) {
      const t = textOf(Array.isArray(v) ? v[0] : v);
      if (t) previousOriginal = t;
      continue;
    }
    if (MARKER_NAMES.has(name)) continue;
    const values = Array.isArray(v) ? v : [v];
    if (values.some((x) => x === null || x === undefined)) throw new NullHeaderError(name);
    out[name] = Array.isArray(v) ? (v as Buffer[]) : (v as Buffer);
  }
  out[REDRIVE_HEADERS.redriveId] = markers.redriveId;
  out[REDRIVE_HEADERS.replayId] = markers.replayId;
  out[REDRIVE_HEADERS.redriveCount] = String(Math.max(markers.redriveCount, previousCount + 1));
  out[REDRIVE_HEADERS.originalMessageId] =
    previousOriginal ?? markers.originalMessageId ?? `${self.topic}-${self.partition}-${self.offset}`;
  return out;
}

export class NullHeaderError extends Error {
  constructor(readonly header: string) {
    super(`header ${header} has no value`);
  }
}

/** The ordering lane of a record: its key's exact bytes, or its DLT partition when it has no key. */
export function laneOf(partition: number, key: Uint8Array | null): string {
  return key === null ? `nokey:${partition}` : `key:${Buffer.from(key).toString("base64")}`;
}

function errorChain(e: unknown): Array<{ name?: string; type?: string; message?: string }> {
  const out: Array<{ name?: string; type?: string; message?: string }> = [];
  let cur = e as Record<string, unknown> | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 8; i++) {
    out.push(cur as { name?: string; type?: string; message?: string });
    cur = (cur.originalError ?? cur.retriableError ?? cur.cause) as Record<string, unknown> | undefined;
  }
  return out;
}

/** A produce failure in the operator's words; `stop` when the broker is unreachable. */
export function produceFailure(
  e: unknown,
  topic: string,
  bytes: number,
  mapError: MoverDeps["mapError"],
): { reason: string; stop: BrokerError | null } {
  const links = errorChain(e);
  const type = links.map((l) => l.type).find((t) => t && t !== "UNKNOWN");
  const detail = links.map((l) => l.message).filter(Boolean)[0] ?? String(e);
  if (type === "MESSAGE_TOO_LARGE" || type === "RECORD_LIST_TOO_LARGE") {
    return {
      reason: `Topic "${topic}" refused the letter as too large (${bytes} bytes; ${type}). Raise the topic's max.message.bytes, or move it to a topic that accepts it. It is still in the DLT.`,
      stop: null,
    };
  }
  if (
    type === "TOPIC_AUTHORIZATION_FAILED" ||
    type === "CLUSTER_AUTHORIZATION_FAILED" ||
    type === "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
  ) {
    return {
      reason: `The console may not write to topic "${topic}" (${type}). Grant its principal Write on the topic (and IdempotentWrite on the cluster for older brokers). It is still in the DLT.`,
      stop: null,
    };
  }
  if (type === "UNKNOWN_TOPIC_OR_PARTITION") {
    return { reason: `Topic "${topic}" does not exist (any more). It is still in the DLT.`, stop: null };
  }
  if (type === "INVALID_RECORD" || type === "CORRUPT_MESSAGE" || type === "INVALID_TIMESTAMP") {
    return { reason: `Topic "${topic}" refused the letter (${type}: ${detail}). It is still in the DLT.`, stop: null };
  }
  const mapped = mapError(e, topic);
  if (mapped.kind === "unreachable")
    return {
      reason: `${mapped.userMessage} The letter was not confirmed by "${topic}" and is still in the DLT.`,
      stop: mapped,
    };
  return {
    reason: `Publishing to topic "${topic}" failed${type ? ` (${type})` : ""}: ${detail}. It is still in the DLT.`,
    stop: null,
  };
}

interface Pending<R = MoveRequest> {
  req: R;
  partition: number;
  offset: bigint;
}

const orderingKeyOf = (key: Uint8Array | null): string | null => {
  if (key === null) return null;
  const buf = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return isUtf8(buf) ? buf.toString("utf8") : `base64:${buf.toString("base64")}`;
};

/** Consecutive requested offsets of one partition, read by one chain of Fetches. */
export function planRuns<P extends { partition: number; offset: bigint }>(
  pending: P[],
  maxGap: number,
  maxRun: number,
): P[][] {
  const runs: P[][] = [];
  let cur: P[] = [];
  for (const p of pending) {
    const last = cur[cur.length - 1];
    if (
      last &&
      (last.partition !== p.partition ||
        p.offset - last.offset > BigInt(maxGap) + 1n ||
        p.offset - cur[0].offset >= BigInt(maxRun))
    ) {
      runs.push(cur);
      cur = [];
    }
    cur.push(p);
  }
  if (cur.length) runs.push(cur);
  return runs;
}

/** How one requested record settled in the shared walk; callers turn it into their own result type. */
interface Settled<R> {
  req: R;
  outcome: "done" | "missing" | "checksum_mismatch" | "failed";
  reason: string | null;
  destination: string | null;
  orderingKey: string | null;
  /** Where the delivery put a copy that can be linked to (a repaired copy's record), else null. */
  copyId: string | null;
}

/** What happens to one requested record whose checksum matched, before its offset is marked handled. */
interface RecordStep<R> {
  /** Records delivered at once (1: strictly one after another). */
  concurrency: number;
  /** Keys whose records are not delivered (MoveOptions.heldKeys). */
  heldKeys: ReadonlySet<string>;
  /** A failure holds back later records of the same key in this call (keeps a key's order on the target). */
  blocksLane: boolean;
  /** The handled mark recorded after a successful delivery. */
  mark(req: R): { operationId: string; outcome: HandledOutcome };
  /**
   * Delivers the record (its copy is safe elsewhere when this resolves ok). Null: stopped before
   * anything happened (no result). `stop`: the broker is unreachable, stop the walk.
   */
  deliver(
    req: R,
    record: InternalRecord,
    at: { partition: number; offset: bigint; position: number; stopped(): boolean; data?: RecordData },
  ): Promise<
    | null
    | { ok: true; destination: string | null; copyId?: string | null }
    | { ok: false; reason: string; destination: string | null; stop?: BrokerError }
  >;
  /** Why a delivered record is still shown as waiting when recording its mark failed. */
  markFailed(req: R, destination: string | null, error: unknown): string;
  /** A noun for the duplicate-request reason ("move", "discard"). */
  noun: string;
  /** Checks before anything is read (typed errors: nothing has happened yet). */
  prepare?(): Promise<void>;
  /**
   * The data the record stands for, when it is not its own (a share-group dead letter: its
   * original), with the checksums a request may carry for it; a reason when there is none.
   */
  resolve?(
    record: InternalRecord,
  ): Promise<null | { data: RecordData; checksums: string[] } | { reason: string; holdsBack: boolean }>;
}

/**
 * One walk over requested DLT records, shared by move and remove: ids parsed, records fetched by
 * offset in DLT order, handled ones skipped ("missing"), the checksum checked, the step's delivery
 * awaited, and only then the offset marked handled. Lanes keep one key's records in order.
 */
async function* forRequestedRecords<R extends { letterId: string; sha256: string }, Out>(
  deps: MoverDeps,
  dlq: string,
  requests: R[],
  signal: AbortSignal | undefined,
  step: RecordStep<R>,
  toResult: (s: Settled<R>) => Out,
): AsyncGenerator<Out> {
  // Up-front checks run on the first next(), before anything is read.
  await step.prepare?.();
  const store = deps.store!;
  const ready: Out[] = [];
  let wake: (() => void) | null = null;
  const emit = (r: Settled<R>) => {
    ready.push(toResult(r));
    wake?.();
  };
  const settled = (
    req: R,
    outcome: Settled<R>["outcome"],
    reason: string | null,
    destination: string | null = null,
    orderingKey: string | null = null,
    copyId: string | null = null,
  ): Settled<R> => ({
    req,
    outcome,
    reason,
    destination,
    orderingKey,
    copyId,
  });

  // Ids: parse, drop repeats, find those outside the log.
  const states = await deps.partitions(dlq).catch((e) => {
    throw deps.mapError(e, dlq);
  });
  const ranges = new Map(states.map((s) => [s.partition, s]));
  // Before any read: if the topic is recreated during the walk, its records carry other bytes than
  // the index says (checksum_mismatch) and are marked under the old id, never shown handled wrongly.
  const topic: TopicRef = deps.topicKey
    ? await deps.topicKey(dlq).catch((e) => {
        throw deps.mapError(e, dlq);
      })
    : dlq;
  const pending: Array<Pending<R>> = [];
  const seen = new Set<string>();
  for (const req of requests) {
    const ref = parseLetterId(req.letterId);
    if (!ref) {
      emit(settled(req, "missing", `"${req.letterId}" is not a Kafka letter id (<partition>-<offset>).`));
      continue;
    }
    if (seen.has(req.letterId)) {
      emit(settled(req, "missing", `Letter ${req.letterId} was requested twice in one ${step.noun}: handled once.`));
      continue;
    }
    seen.add(req.letterId);
    const range = ranges.get(ref.partition);
    if (!range || ref.offset < range.start || ref.offset >= range.end) {
      emit(
        settled(
          req,
          "missing",
          range && ref.offset < range.start
            ? `Offset ${ref.offset} of partition ${ref.partition} is gone from "${dlq}" (deleted by retention).`
            : `There is no letter ${req.letterId} in "${dlq}".`,
        ),
      );
      continue;
    }
    pending.push({ req, partition: ref.partition, offset: ref.offset });
  }
  pending.sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));

  const concurrency = Math.max(1, step.concurrency);
  const windowBytes = deps.windowBytes ?? 16 * 1024 * 1024;
  const lanes = new Map<string, { tail: Promise<void>; blockedBy: string | null }>();
  let inFlight = 0;
  let heldBytes = 0;
  let stopError: BrokerError | null = null;
  let spaceWaiter: (() => void) | null = null;
  const stopped = () => stopError !== null || signal?.aborted === true;
  const release = (bytes: number) => {
    inFlight--;
    heldBytes -= bytes;
    spaceWaiter?.();
    wake?.();
  };
  const waitForSpace = async (bytes: number) => {
    while (!stopped() && inFlight > 0 && (inFlight >= concurrency || heldBytes + bytes > windowBytes)) {
      await new Promise<void>((r) => (spaceWaiter = r));
      spaceWaiter = null;
    }
  };
  const onAbort = () => {
    spaceWaiter?.();
    wake?.();
  };
  signal?.addEventListener("abort", onAbort);

  /** One record, its lane's previous record settled. */
  const handleOne = async (
    p: Pending<R>,
    record: InternalRecord,
    lane: { blockedBy: string | null },
  ): Promise<Settled<R> | null> => {
    const { req } = p;
    const orderingKey = orderingKeyOf(record.key);
    const block = () => {
      if (step.blocksLane) lane.blockedBy = req.letterId;
    };
    if (orderingKey !== null && step.heldKeys.has(orderingKey))
      return settled(req, "failed", heldBackReason(orderingKey), null, orderingKey);
    if (lane.blockedBy)
      return settled(
        req,
        "failed",
        `Held back to keep the key's order: letter ${lane.blockedBy} with the same key was not moved. It is still in the DLT.`,
        null,
        orderingKey,
      );
    const value = record.value ?? new Uint8Array(0);
    const resolved = step.resolve ? await step.resolve(record) : null;
    if (resolved && "reason" in resolved) {
      if (resolved.holdsBack) block();
      return settled(req, "failed", resolved.reason, null, orderingKey);
    }
    if (sha256Of(value) !== req.sha256 && !resolved?.checksums.includes(req.sha256)) {
      block();
      return settled(
        req,
        "checksum_mismatch",
        `The letter's bytes differ from when it was indexed (sha256 ${sha256Of(value).slice(0, 12)}…, expected ${req.sha256.slice(0, 12)}…). It was left as it is; scan the DLT again.`,
        null,
        orderingKey,
      );
    }
    const position = Number(p.offset - (ranges.get(p.partition)?.start ?? 0n));
    const d = await step.deliver(req, record, {
      partition: p.partition,
      offset: p.offset,
      position,
      stopped,
      data: resolved?.data,
    });
    if (d === null) return null;
    if (!d.ok) {
      if (d.stop && !stopError) stopError = d.stop;
      block();
      return settled(req, "failed", d.reason, d.destination, orderingKey);
    }
    // Delivered (acknowledged by all in-sync replicas, or archived): only now is the offset handled.
    const ref: RecordRef = { partition: p.partition, offset: p.offset };
    let lastError: unknown = null;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await store.markHandled(deps.connectionId, topic, [ref], step.mark(req));
        return settled(req, "done", null, d.destination, orderingKey, d.copyId ?? null);
      } catch (e) {
        lastError = e;
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
    block();
    return settled(req, "failed", step.markFailed(req, d.destination, lastError), d.destination, orderingKey);
  };

  let feedError: unknown = null;
  let feedDone = false;

  const feed = async () => {
    for (const run of planRuns(pending, deps.maxGap ?? 8, deps.maxRun ?? 500)) {
      if (stopped()) return;
      const partition = run[0].partition;
      const first = run[0].offset;
      const last = run[run.length - 1].offset;
      const wanted = new Map(run.map((p) => [p.offset.toString(), p]));
      // Handled marks of the run: one range query, read just before its records are handled.
      let marks: Map<string, HandledMark>;
      try {
        marks = store.handledBetween
          ? await store.handledBetween(deps.connectionId, topic, partition, first, last)
          : await store.handledAmong(
              deps.connectionId,
              topic,
              run.map((p) => ({ partition, offset: p.offset })),
            );
      } catch (e) {
        throw new AppError("unavailable:database", {
          message: (e as Error).message,
          cause: e,
          userMessage:
            "The console's record of handled Kafka offsets could not be read, so nothing more was done (a handled letter must never be handled twice). Check the database, then resume.",
        });
      }
      const iter = deps.readRecords(dlq, partition, first, last + 1n)[Symbol.asyncIterator]();
      try {
        for (;;) {
          if (stopped()) return;
          let next: IteratorResult<InternalRecord>;
          try {
            next = await iter.next();
          } catch (e) {
            throw deps.mapError(e, dlq);
          }
          if (next.done) break;
          const record = next.value;
          const p = wanted.get(record.offset);
          if (!p) continue;
          wanted.delete(record.offset);
          const mark = marks.get(refKey(partition, p.offset));
          if (markApplies(mark, record.timestamp)) {
            emit(
              settled(
                p.req,
                "missing",
                `Already handled at ${mark.at.toISOString()} (${mark.outcome}, operation ${mark.operationId}): a handled offset is never handled twice.`,
                null,
                orderingKeyOf(record.key),
              ),
            );
            continue;
          }
          const bytes = (record.value?.byteLength ?? 0) + (record.key?.byteLength ?? 0);
          await waitForSpace(bytes);
          if (stopped()) return;
          inFlight++;
          heldBytes += bytes;
          const name = laneOf(partition, record.key);
          const lane = lanes.get(name) ?? { tail: Promise.resolve(), blockedBy: null };
          lane.tail = lane.tail.then(async () => {
            try {
              // Stopped while waiting for its lane: untouched, no result.
              if (stopped()) return;
              const r = await handleOne(p, record, lane);
              if (r) emit(r);
            } catch (e) {
              feedError ??= e;
              stopError ??= isAppError(e) ? (e as BrokerError) : deps.mapError(e, dlq);
            } finally {
              release(bytes);
            }
          });
          lanes.set(name, lane);
        }
      } finally {
        await iter.return?.(undefined)?.catch?.(() => undefined);
      }
      // Requested offsets inside the log without a record: compacted away, or transaction markers.
      for (const p of wanted.values()) {
        emit(
          settled(
            p.req,
            "missing",
            `There is no record at offset ${p.offset} of partition ${partition} of "${dlq}" (compacted away, an aborted transaction, or a transaction marker).`,
          ),
        );
      }
    }
  };

  const feeding = feed()
    .catch((e) => {
      feedError ??= e;
    })
    .finally(() => {
      feedDone = true;
      wake?.();
    });

  // Results are handed out as records settle. Breaking off the iteration stops new records; those
  // in flight still settle (their delivery and mark complete) before the generator returns.
  let broken = true;
  try {
    for (;;) {
      while (ready.length) yield ready.shift()!;
      if (feedDone && inFlight === 0) break;
      await new Promise<void>((r) => {
        wake = r;
        if (ready.length || (feedDone && inFlight === 0)) r();
      });
      wake = null;
    }
    await feeding;
    while (ready.length) yield ready.shift()!;
    broken = false;
  } finally {
    if (broken) {
      stopError ??= new BrokerError("bad_request", { userMessage: `The ${step.noun} was broken off.` });
      onAbort();
      await feeding;
      while (inFlight > 0) await new Promise<void>((r) => (wake = r));
    }
    signal?.removeEventListener("abort", onAbort);
  }
  if (feedError) throw isAppError(feedError) ? feedError : deps.mapError(feedError, dlq);
  if (stopError) throw stopError;
}

function requireStore(deps: MoverDeps, what: string): void {
  if (!deps.store)
    throw new BrokerError("bad_request", {
      userMessage: `${what} on Kafka needs the console's database: a record stays in the topic and is only marked handled there. Configure DATABASE_URL.`,
    });
}

export function moveKafkaLetters(
  deps: MoverDeps,
  dlq: string,
  requests: MoveRequest[],
  opts: MoveOptions = {},
): AsyncGenerator<MoveResult> {
  const exists = new Map<string, Promise<boolean>>();
  const topicExists = (t: string) => {
    let p = exists.get(t);
    if (!p) {
      p = deps.topicExists(t);
      exists.set(t, p);
      p.catch(() => exists.delete(t));
    }
    return p;
  };
  const repairing = requests.some((r) => r.repair);
  const prepare = async () => {
    if (repairing && !opts.beforeRemove) {
      throw new BrokerError("bad_request", {
        userMessage:
          "A repair must archive the original letter before it is marked handled, and this request gave no archive. Nothing was read or published.",
      });
    }
    requireStore(deps, repairing ? "Repair" : "Redrive");
    for (const r of requests) {
      if (!UUID.test(r.markers.redriveId)) {
        throw new BrokerError("bad_request", {
          userMessage: `Redrive id "${r.markers.redriveId}" is not a UUID: Kafka records the handled offsets under the job's id.`,
        });
      }
      if (r.repair && !UUID.test(r.repair.operationId)) {
        throw new BrokerError("bad_request", {
          userMessage: `Repair operation id "${r.repair.operationId}" is not a UUID: the repaired copy carries it as ${REPAIR_HEADER}.`,
        });
      }
    }
    await deps.assertDlq(dlq);
    // Explicit targets are checked before anything moves.
    for (const name of new Set(requests.flatMap((r) => (r.target.kind === "queue" ? [r.target.name] : [])))) {
      if (name === dlq)
        throw new BrokerError("bad_request", {
          userMessage: `The target "${name}" is the dead-letter topic itself: choose the original topic or another one.`,
        });
      let ok: boolean;
      try {
        ok = await topicExists(name);
      } catch (e) {
        throw deps.mapError(e, name);
      }
      if (!ok)
        throw new BrokerError("not_found", {
          userMessage: `Target topic "${name}" does not exist on ${deps.endpoint}. Nothing was moved. Create it, or choose another target.`,
        });
    }
  };

  const origins = new Map<string, string | null>();
  const resolveTarget = async (
    req: MoveRequest,
    record: InternalRecord,
  ): Promise<{ topic: string } | { reason: string }> => {
    if (req.target.kind === "queue") return { topic: req.target.name };
    let topic = originOf(decodeKafkajsHeaders(record.headers)).topic;
    if (!topic) {
      if (!origins.has(dlq)) origins.set(dlq, deps.configOrigin(dlq));
      topic = origins.get(dlq) ?? null;
    }
    if (!topic)
      return {
        reason: `Letter has no original topic: no kafka_dlt-original-topic or __connect.errors.topic header, and no origin is configured for "${dlq}". Choose a target topic.`,
      };
    if (topic === dlq)
      return {
        reason: `The letter's original topic is the dead-letter topic itself ("${dlq}"): choose a target topic.`,
      };
    let ok: boolean;
    try {
      ok = await topicExists(topic);
    } catch (e) {
      return { reason: `Could not check the original topic "${topic}": ${deps.mapError(e, topic).userMessage}` };
    }
    return ok
      ? { topic }
      : {
          reason: `The original topic "${topic}" does not exist on ${deps.endpoint}. Choose a target topic. The letter is still in the DLT.`,
        };
  };

  const topicOf = new Map<MoveRequest, string>();
  const copyOf = new Map<MoveRequest, string | null>();
  // `beforeRemove` is called one letter at a time (MoveOptions), while produces of different keys
  // are pipelined: archiving is queued behind the previous letter's.
  let archiving: Promise<unknown> = Promise.resolve();
  const oneAtATime = (f: () => Promise<void>): Promise<void> => {
    const run = archiving.then(f, f);
    archiving = run.catch(() => undefined);
    return run;
  };
  return forRequestedRecords<MoveRequest, MoveResult>(
    deps,
    dlq,
    requests,
    opts.signal,
    {
      prepare,
      concurrency: opts.maxInFlight ?? deps.concurrency ?? 16,
      heldKeys: new Set(opts.heldKeys ?? []),
      blocksLane: true,
      noun: "move",
      // A repaired original is marked "redriven" too: the outcome column is a database enum with no
      // "repaired" value. The mark is made under the job's id, as for a redrive; the copy carries
      // the repair operation as REPAIR_HEADER.
      mark: (req) => ({ operationId: req.markers.redriveId, outcome: "redriven" }),
      // A share-group dead letter stands for its original record: fetched while retained; the
      // request's checksum may be the DLQ record's (the index) or the joined letter's (getLetter).
      resolve: deps.originalOf
        ? async (record) => {
            if (!isShareDeadLetter(record.headers)) return null;
            const ref = originalRef(record.headers);
            if (!ref) return null;
            let lookup: OriginalLookup;
            try {
              lookup = await deps.originalOf!(ref);
            } catch (e) {
              return {
                reason: `The original record (offset ${ref.offset} of partition ${ref.partition} of "${ref.topic}") could not be read: ${deps.mapError(e, ref.topic).userMessage} It is still in the DLQ.`,
                holdsBack: true,
              };
            }
            const j = joinOriginal(record, lookup);
            // Gone for good: it can never be redriven, so it holds back no later letter of its lane.
            if (j.data === null) return { reason: originalGoneReason(ref, j.why), holdsBack: false };
            return { data: j.data, checksums: [sha256Of(j.data.value ?? new Uint8Array(0))] };
          }
        : undefined,
      markFailed: (req, _destination, e) =>
        req.repair
          ? `The repaired copy was published to topic "${topicOf.get(req)}"${copyOf.get(req) ? ` (${copyOf.get(req)})` : ""} and the original archived, but recording the original as handled failed: it still shows as waiting in the DLT, and repairing it again would publish a second copy.`
          : `Published to topic "${topicOf.get(req)}" (replay id ${req.markers.replayId}), but recording it as handled failed (${(e as Error)?.message ?? e}): it still shows as waiting in the DLT, and redriving it again would make a duplicate.`,
      async deliver(req, record, at) {
        const problem = req.repair ? repairProblem(req.repair) : null;
        if (problem) return { ok: false, reason: problem, destination: null };
        const target = await resolveTarget(req, record);
        if ("reason" in target) return { ok: false, reason: target.reason, destination: null };
        const destination = `topic ${target.topic}`;
        topicOf.set(req, target.topic);
        // A share-group dead letter publishes its original's data (at.data), never the DLQ record's own headers.
        const data = at.data ?? record;
        let headers: IHeaders;
        try {
          const source = req.repair ? repairHeaders(data.headers, req.repair, req.markers.replayId) : data.headers;
          headers = redriveHeaders(source, req.markers, { topic: dlq, partition: at.partition, offset: record.offset });
        } catch (e) {
          if (!(e instanceof NullHeaderError)) throw e;
          return {
            ok: false,
            reason: `Header "${e.header}" has no value, which the console's Kafka client cannot write; the letter is not sent with changed headers. It is still in the DLT.`,
            destination,
          };
        }
        if (req.repair) {
          // Once, at the end: a marker of an earlier repair is replaced, never appended.
          delete headers[REPAIR_HEADER];
          headers[REPAIR_HEADER] = req.repair.operationId;
        }
        const value = req.repair?.body !== undefined ? Buffer.from(req.repair.body) : data.value;
        // Stopped before its produce: untouched, no result.
        if (at.stopped()) return null;
        let written: { partition: number; offset: string } | undefined;
        try {
          written = await deps.produce(target.topic, { key: asBuffer(data.key), value: asBuffer(value), headers });
        } catch (e) {
          const f = produceFailure(e, target.topic, value?.byteLength ?? 0, deps.mapError);
          return { ok: false, reason: f.reason, destination, stop: f.stop ?? undefined };
        }
        if (!req.repair) return { ok: true, destination };
        // The copy is confirmed; the original's complete copy goes to the archive before the walk
        // marks its offset handled. This runs even when the move was stopped meanwhile: the copy is out.
        const copyId = written ? copyIdOf(target.topic, written) : null;
        copyOf.set(req, copyId);
        try {
          await oneAtATime(() =>
            opts.beforeRemove!(letterCopyOf(dlq, req.letterId, record, at, deps.configOrigin(dlq))),
          );
        } catch (e) {
          return { ok: false, reason: archiveFailure(e, target.topic, copyId), destination };
        }
        return { ok: true, destination, copyId };
      },
    },
    (s) => ({
      letterId: s.req.letterId,
      outcome: s.outcome === "done" ? "moved" : s.outcome,
      destination: s.destination,
      reason: s.reason,
      orderingKey: s.orderingKey,
      ...(s.req.repair && s.outcome === "done" ? { copyId: s.copyId } : {}),
    }),
  );
}

/** The same bytes as a Buffer, without a copy. */
const asBuffer = (u: Uint8Array | null): Buffer | null =>
  u === null || Buffer.isBuffer(u) ? (u as Buffer | null) : Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** Everything `republish` needs to produce a discarded record again (bytes base64, header values in order). */
export interface KafkaEnvelope {
  topic: string;
  partition: number;
  offset: string;
  timestamp: string;
  key: string | null;
  /** Header name and value (base64; null: a header without value), in record order. */
  headers: Array<[string, string | null]>;
}

/** The record's headers in order, as kafkajs decoded them (one name's values stay together). */
function envelopeHeaders(h: Record<string, unknown> | undefined): Array<[string, string | null]> {
  const out: Array<[string, string | null]> = [];
  for (const [name, v] of Object.entries(h ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) {
      out.push([
        name,
        one === null || one === undefined ? null : b64(Buffer.isBuffer(one) ? one : Buffer.from(String(one))),
      ]);
    }
  }
  return out;
}

/** The complete copy of a DLT record handed to `beforeRemove` (discard, and the original of a repair). */
function letterCopyOf(
  dlq: string,
  letterId: string,
  record: InternalRecord,
  at: { partition: number; position: number },
  configOrigin: string | null,
): LetterCopy {
  const letter = toLetter(dlq, at.partition, record, at.position, { configOrigin });
  const envelope = encodeEnvelope<KafkaEnvelope>("kafka", record.value ?? new Uint8Array(0), {
    topic: dlq,
    partition: at.partition,
    offset: record.offset,
    timestamp: record.timestamp,
    key: record.key === null ? null : b64(record.key),
    headers: envelopeHeaders(record.headers),
  });
  return { letterId, letter, envelope };
}

/**
 * Discard on Kafka (`BrokerAdapter.removeLetters`): the same walk as redrive; delivering is handing
 * the complete copy to `beforeRemove`, strictly one record at a time; the removal is the handled
 * mark (outcome "discarded", under `opts.operationId`).
 */
export function removeKafkaLetters(
  deps: MoverDeps,
  dlq: string,
  requests: RemoveRequest[],
  opts: RemoveOptions,
): AsyncGenerator<RemoveResult> {
  return forRequestedRecords<RemoveRequest, RemoveResult>(
    deps,
    dlq,
    requests,
    opts.signal,
    {
      async prepare() {
        requireStore(deps, "Discarding");
        if (!UUID.test(opts.operationId))
          throw new BrokerError("bad_request", {
            userMessage: `Operation id "${opts.operationId}" is not a UUID: Kafka records the discarded offsets under it.`,
          });
        await deps.assertDlq(dlq);
      },
      concurrency: 1,
      heldKeys: new Set(),
      blocksLane: false,
      noun: "discard",
      mark: () => ({ operationId: opts.operationId, outcome: "discarded" }),
      markFailed: (_req, _d, e) =>
        `Its copy is in the archive, but recording the offset as discarded failed (${(e as Error)?.message ?? e}): it still shows as waiting in the DLT.`,
      async deliver(req, record, at) {
        if (at.stopped()) return null;
        try {
          await opts.beforeRemove(letterCopyOf(dlq, req.letterId, record, at, deps.configOrigin(dlq)));
        } catch (e) {
          return { ok: false, reason: beforeRemoveFailure(e), destination: null };
        }
        return { ok: true, destination: null };
      },
    },
    (s) => ({ letterId: s.req.letterId, outcome: s.outcome === "done" ? "removed" : s.outcome, reason: s.reason }),
  );
}
