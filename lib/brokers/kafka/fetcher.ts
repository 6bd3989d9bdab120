import "server-only";
import type { InternalCluster, InternalPartitionData, InternalRecord } from "@/lib/brokers/kafka/client";

export interface FetchLimits {
  /** Bytes per Fetch response (default 4 MiB). A single record batch larger than this still comes whole: Kafka returns at least one. */
  maxBytes: number;
  /** Bytes per partition per Fetch (default 4 MiB; reads ask for one partition at a time). */
  maxBytesPerPartition: number;
  /** How long the broker may wait for `minBytes` (default 100 ms: a read never waits for new letters). */
  maxWaitMs: number;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = { maxBytes: 4 * 1024 * 1024, maxBytesPerPartition: 4 * 1024 * 1024, maxWaitMs: 100 };

const ABORT_MARKER_KEY = Buffer.from([0, 0, 0, 0]);

/** Drops records of aborted transactions (read_committed) and control records, as Kafka's own consumer does. */
export function committedRecords(data: Pick<InternalPartitionData, "messages" | "abortedTransactions">): InternalRecord[] {
  const aborted = [...(data.abortedTransactions ?? [])].sort((a, b) => (BigInt(a.firstOffset) < BigInt(b.firstOffset) ? -1 : 1));
  const open = new Set<string>();
  const out: InternalRecord[] = [];
  for (const m of data.messages) {
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

/**
 * Reads one partition forward over [from, to) with plain Fetch requests to its leader: no consumer
 * group, nothing committed, the same bytes a consumer would get. At most two Fetch responses are
 * held at once (the one being handed out and the next, requested ahead).
 */
export async function* readPartition(
  cluster: InternalCluster,
  topic: string,
  partition: number,
  from: bigint,
  to: bigint,
  limits: FetchLimits,
  signal?: AbortSignal,
): AsyncGenerator<InternalRecord> {
  if (from >= to) return;
  const fetchAt = async (offset: bigint, attempt = 0): Promise<InternalPartitionData> => {
    try {
      const leaders = cluster.findLeaderForPartitions(topic, [partition]);
      const nodeId = Object.keys(leaders)[0];
      if (nodeId === undefined) throw Object.assign(new Error(`no leader for ${topic}/${partition}`), { type: "LEADER_NOT_AVAILABLE" });
      const broker = await cluster.findBroker({ nodeId });
      const res = await broker.fetch({
        replicaId: -1,
        isolationLevel: 1,
        maxWaitTime: limits.maxWaitMs,
        minBytes: 1,
        maxBytes: limits.maxBytes,
        topics: [{ topic, partitions: [{ partition, fetchOffset: offset.toString(), maxBytes: limits.maxBytesPerPartition }] }],
      });
      const data = res.responses.find((r) => r.topicName === topic)?.partitions.find((p) => p.partition === partition);
      if (!data) throw new Error(`Fetch response without ${topic}/${partition}`);
      return data;
    } catch (e) {
      const type = (e as { type?: string }).type;
      if (attempt < 2 && (type === "NOT_LEADER_FOR_PARTITION" || type === "LEADER_NOT_AVAILABLE" || type === "UNKNOWN_LEADER_EPOCH" || (e as Error).name === "KafkaJSBrokerNotFound")) {
        await cluster.refreshMetadata();
        return fetchAt(offset, attempt + 1);
      }
      throw e;
    }
  };

  let next = from;
  let pending: Promise<InternalPartitionData> | null = fetchAt(next);
  let emptyRounds = 0;
  while (pending) {
    const data: InternalPartitionData = await pending;
    pending = null;
    if (signal?.aborted) throw signal.reason ?? new Error("aborted");
    const raw = data.messages;
    // The batch can start before the requested offset (compressed batches): skip what lies before it.
    const lastRaw = raw.length ? BigInt(raw[raw.length - 1].offset) : null;
    let after = next;
    if (lastRaw !== null && lastRaw >= next) after = lastRaw + 1n;
    else {
      // Nothing at or after `next`: the rest is not readable yet (an open transaction holds the last stable offset).
      if (++emptyRounds >= 3) return;
    }
    if (after < to && after > next) {
      emptyRounds = 0;
      pending = fetchAt(after); // request ahead while the caller works on this batch
      pending.catch(() => undefined);
    } else if (after < to) {
      pending = fetchAt(after);
      pending.catch(() => undefined);
    }
    for (const m of committedRecords(data)) {
      const o = BigInt(m.offset);
      if (o < next) continue;
      if (o >= to) return;
      yield m;
    }
    next = after;
  }
}
