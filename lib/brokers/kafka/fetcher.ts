import "server-only";
import type { InternalCluster, InternalPartitionData, InternalRecord } from "@/lib/brokers/kafka/client";

export interface FetchLimits {
  /** Bytes per Fetch response (default 4 MiB). A single record batch larger than this still comes whole: Kafka returns at least one. */
  maxBytes: number;
  /** Bytes per partition per Fetch (default 1 MiB; reads ask for one partition at a time). Streaming holds at most 3 × `concurrency` of these. */
  maxBytesPerPartition: number;
  /** How long the broker may wait for `minBytes` (default 100 ms: a read never waits for new letters). */
  maxWaitMs: number;
  /** Fetches of one partition in flight at once while streaming (default 3; see `readPartitionConcurrently`). */
  concurrency?: number;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = {
  maxBytes: 4 * 1024 * 1024,
  maxBytesPerPartition: 1024 * 1024,
  maxWaitMs: 100,
  concurrency: 3,
};

const ABORT_MARKER_KEY = Buffer.from([0, 0, 0, 0]);

/** Drops records of aborted transactions (read_committed) and control records, as Kafka's own consumer does. */
export function committedRecords(
  data: Pick<InternalPartitionData, "messages" | "abortedTransactions">,
): InternalRecord[] {
  const messages = data.messages;
  if (!data.abortedTransactions?.length) {
    // No aborted transaction in range (the common case): only control records (commit markers) go.
    let i = 0;
    while (i < messages.length && !messages[i].isControlRecord) i++;
    if (i === messages.length) return messages;
    const out = messages.slice(0, i);
    for (; i < messages.length; i++) if (!messages[i].isControlRecord) out.push(messages[i]);
    return out;
  }
  const aborted = [...data.abortedTransactions].sort((a, b) =>
    BigInt(a.firstOffset) < BigInt(b.firstOffset) ? -1 : 1,
  );
  const open = new Set<string>();
  const out: InternalRecord[] = [];
  for (const m of messages) {
    while (aborted.length && BigInt(m.offset) >= BigInt(aborted[0].firstOffset)) open.add(aborted.shift()!.producerId);
    const pid = m.batchContext?.producerId ?? "";
    if (m.isControlRecord) {
      if (m.key && Buffer.from(m.key).equals(ABORT_MARKER_KEY)) open.delete(pid);
      continue;
    }
    if (open.has(pid) && m.batchContext?.inTransaction) continue;
    out.push(m);
  }
  return out;
}

/** The records of [from, to) among `records` (in offset order); BigInt comparisons at the two ends only. */
export function recordsInRange(records: InternalRecord[], from: bigint, to: bigint): InternalRecord[] {
  let lo = 0;
  let hi = records.length;
  while (lo < hi && BigInt(records[lo].offset) < from) lo++;
  while (hi > lo && BigInt(records[hi - 1].offset) >= to) hi--;
  return lo === 0 && hi === records.length ? records : records.slice(lo, hi);
}

export interface FetchedBatch<M> {
  /** Committed records of the range, in offset order; never empty. */
  records: InternalRecord[];
  /** What `annotate` found for these records (looked up while the previous batch was handed out). */
  meta: M | undefined;
  /** No Fetch of this partition is pending or will follow. */
  last: boolean;
}

/**
 * Reads one partition forward over [from, to) with plain Fetch requests to its leader: no consumer
 * group, nothing committed, the same bytes a consumer would get. Yields one batch per Fetch
 * response. At most two responses are held at once (the one being handed out and the next,
 * requested ahead), so memory is bounded by about 2 × `maxBytesPerPartition` whatever the topic's
 * size. `annotate` runs on each batch as soon as it arrives (e.g. the handled-offset lookup), so
 * its round trip overlaps the caller's work on the previous batch.
 */
export async function* readPartitionBatches<M = undefined>(
  cluster: InternalCluster,
  topic: string,
  partition: number,
  from: bigint,
  to: bigint,
  limits: FetchLimits,
  signal?: AbortSignal,
  annotate?: (first: bigint, last: bigint) => Promise<M>,
  /** Bytes per offset (estimate): each Fetch then asks for about what is left of the range, not more. */
  bytesPerOffset?: number,
  /** Stop after this many Fetches (a probe). */
  maxFetches = Infinity,
): AsyncGenerator<FetchedBatch<M>, "end" | "stalled"> {
  if (from >= to) return "end";
  const sizeFor = (offset: bigint): number => {
    if (!bytesPerOffset) return limits.maxBytesPerPartition;
    const left = Number(to - offset);
    // Kafka always returns the first record batch whole, so a small ask still makes progress.
    return Math.max(1, Math.min(limits.maxBytesPerPartition, Math.ceil(left * bytesPerOffset * 1.1) + 1024));
  };
  const fetchAt = async (offset: bigint, attempt = 0): Promise<InternalPartitionData> => {
    try {
      const leaders = cluster.findLeaderForPartitions(topic, [partition]);
      const nodeId = Object.keys(leaders)[0];
      if (nodeId === undefined)
        throw Object.assign(new Error(`no leader for ${topic}/${partition}`), { type: "LEADER_NOT_AVAILABLE" });
      const broker = await cluster.findBroker({ nodeId });
      const res = await broker.fetch({
        replicaId: -1,
        isolationLevel: 1,
        maxWaitTime: limits.maxWaitMs,
        minBytes: 1,
        maxBytes: limits.maxBytes,
        topics: [{ topic, partitions: [{ partition, fetchOffset: offset.toString(), maxBytes: sizeFor(offset) }] }],
      });
      const data = res.responses.find((r) => r.topicName === topic)?.partitions.find((p) => p.partition === partition);
      if (!data) throw new Error(`Fetch response without ${topic}/${partition}`);
      return data;
    } catch (e) {
      const type = (e as { type?: string }).type;
      if (
        attempt < 2 &&
        (type === "NOT_LEADER_FOR_PARTITION" ||
          type === "LEADER_NOT_AVAILABLE" ||
          type === "UNKNOWN_LEADER_EPOCH" ||
          (e as Error).name === "KafkaJSBrokerNotFound")
      ) {
        await cluster.refreshMetadata();
        return fetchAt(offset, attempt + 1);
      }
      throw e;
    }
  };
  interface Step {
    /** Where the next Fetch starts. */
    after: bigint;
    records: InternalRecord[];
    meta: Promise<M | undefined>;
  }
  const step = (at: bigint): Promise<Step> => {
    const p = fetchAt(at).then((data): Step => {
      const raw = data.messages;
      // The batch can start before the requested offset (compressed batches): skip what lies before it.
      const lastRaw = raw.length ? BigInt(raw[raw.length - 1].offset) : null;
      const after = lastRaw !== null && lastRaw >= at ? lastRaw + 1n : at;
      const records = raw.length ? recordsInRange(committedRecords(data), at, to) : raw;
      const meta =
        annotate && records.length
          ? annotate(BigInt(records[0].offset), BigInt(records[records.length - 1].offset))
          : Promise.resolve(undefined);
      meta.catch(() => undefined);
      return { after, records, meta };
    });
    p.catch(() => undefined); // awaited below; a failure ahead of time must not be unhandled
    return p;
  };

  let next = from;
  let pending: Promise<Step> | null = step(next);
  let emptyRounds = 0;
  while (pending) {
    const got: Step = await pending;
    pending = null;
    if (signal?.aborted) throw signal.reason ?? new Error("aborted");
    if (got.after > next) emptyRounds = 0;
    // Nothing at or after `next`: the rest is not readable yet (an open transaction holds the last stable offset).
    else if (++emptyRounds >= 3) return "stalled";
    next = got.after;
    if (next < to && --maxFetches > 0) pending = step(next); // request ahead while the caller works on this batch
    if (got.records.length) yield { records: got.records, meta: await got.meta, last: pending === null };
  }
  return "end";
}

/** Record by record over [from, to) of one partition (see `readPartitionBatches`). */
export async function* readPartition(
  cluster: InternalCluster,
  topic: string,
  partition: number,
  from: bigint,
  to: bigint,
  limits: FetchLimits,
  signal?: AbortSignal,
): AsyncGenerator<InternalRecord> {
  for await (const batch of readPartitionBatches(cluster, topic, partition, from, to, limits, signal))
    yield* batch.records;
}

const SLICE_FETCHES = 4;

/** Rough bytes per offset of these records on the wire (record overhead included), for sizing Fetches. */
export function bytesPerOffsetOf(records: InternalRecord[]): number {
  if (!records.length) return 0;
  let headerBytes = 0;
  const h = records[0].headers;
  if (h)
    for (const name in h) {
      const v = h[name];
      for (const one of Array.isArray(v) ? v : [v])
        headerBytes += name.length + 4 + (one instanceof Uint8Array ? one.byteLength : 0);
    }
  let bytes = 0;
  for (const r of records) bytes += (r.value?.byteLength ?? 0) + (r.key?.byteLength ?? 0) + headerBytes + 24;
  const span = Number(BigInt(records[records.length - 1].offset) - BigInt(records[0].offset)) + 1;
  return Math.max(1, bytes / span + 64 / records.length);
}

/**
 * `readPartitionBatches` with several Fetches of the same partition in flight, batches still handed
 * out in offset order. A Fetch's next offset is only known from the previous response, so one chain
 * of Fetches waits a round trip per response; instead the range is cut into slices of about one
 * Fetch each (the size learnt from a first, small Fetch) and up to `limits.concurrency` slices are read
 * at once. Memory stays bounded whatever the topic's size: at most `concurrency` slices are open,
 * each holding at most three responses (handed out, decoded next, requested ahead) of about
 * `maxBytesPerPartition` (a single record batch larger than that still comes whole).
 */
export async function* readPartitionConcurrently<M = undefined>(
  cluster: InternalCluster,
  topic: string,
  partition: number,
  from: bigint,
  to: bigint,
  limits: FetchLimits,
  signal?: AbortSignal,
  annotate?: (first: bigint, last: bigint) => Promise<M>,
): AsyncGenerator<FetchedBatch<M>> {
  if (from >= to) return;
  const concurrency = Math.max(1, Math.floor(limits.concurrency ?? 1));
  if (concurrency === 1) {
    yield* readPartitionBatches(cluster, topic, partition, from, to, limits, signal, annotate);
    return;
  }
  // A first, small Fetch (one record batch) shows how large the records are.
  const probe = readPartitionBatches(
    cluster,
    topic,
    partition,
    from,
    to,
    { ...limits, maxBytesPerPartition: 1 },
    signal,
    annotate,
    0,
    1,
  );
  const first = await probe.next();
  void probe.return("end").catch(() => undefined);
  if (first.done) return;
  const got = first.value.records;
  const after = BigInt(got[got.length - 1].offset) + 1n;
  const bpo = bytesPerOffsetOf(got);
  // A slice is read by its own chain of a few Fetches: Kafka returns whole record batches, so each
  // slice re-reads at most the batch its start falls in; longer slices waste less, hold no more.
  const sliceLen = BigInt(Math.max(1, Math.floor((SLICE_FETCHES * limits.maxBytesPerPartition) / bpo)));
  yield { ...first.value, last: after >= to };

  type Slice = {
    iter: AsyncGenerator<FetchedBatch<M>, "end" | "stalled">;
    next: Promise<IteratorResult<FetchedBatch<M>, "end" | "stalled">>;
  };
  const open: Slice[] = [];
  let cut = after;
  const openSlice = () => {
    const end = cut + sliceLen < to ? cut + sliceLen : to;
    // The handled lookup is one range query per slice, started with the slice's first Fetch.
    const meta = annotate ? annotate(cut, end - 1n) : undefined;
    meta?.catch(() => undefined);
    const iter = readPartitionBatches(
      cluster,
      topic,
      partition,
      cut,
      end,
      limits,
      signal,
      meta ? () => meta : undefined,
      bpo,
    );
    const next = iter.next();
    next.catch(() => undefined);
    open.push({ iter, next });
    cut = end;
  };
  try {
    while (open.length < concurrency && cut < to) openSlice();
    while (open.length) {
      const head = open[0];
      const step = await head.next;
      if (step.done) {
        // Stalled: nothing readable past here yet (an open transaction holds the last stable offset).
        if (step.value === "stalled") return;
        open.shift();
        if (cut < to) openSlice();
        continue;
      }
      head.next = head.iter.next();
      head.next.catch(() => undefined);
      yield { ...step.value, last: open.length === 1 && cut >= to && step.value.last };
    }
  } finally {
    for (const s of open) void s.iter.return("end").catch(() => undefined);
  }
}
