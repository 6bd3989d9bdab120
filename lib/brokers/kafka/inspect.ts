import "server-only";
import { ConfigResourceTypes } from "kafkajs";
import type { KafkaConnectionConfig } from "@/lib/config";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerInspection, InspectOptions } from "@/lib/brokers/contract/inspection";
import type { InternalCluster, InternalPartitionData } from "@/lib/brokers/kafka/client";
import {
  CHECKED_CONFIGS,
  kafkaFindings,
  originsOf,
  topicConfigOf,
  type DescribedResource,
  type DltFacts,
} from "@/lib/brokers/kafka/config-checks";
import type { TopicConfig } from "@/lib/brokers/kafka/retention";
import { dlqNamesOf, logStartOf, vitalsOf, type LogStart, type PartitionOffsets } from "@/lib/brokers/kafka/vitals";

/**
 * The sampler's look at a Kafka connection (`BrokerAdapter.inspect`), in a bounded number of
 * requests whatever the number of topics:
 *   1 Metadata (every topic: discovery, partition counts, leaders),
 *   2 ListOffsets per partition leader (log start and end of every DLT partition at once; when a
 *     partition's leader answers with an error, 2 more per topic on it, so that only that topic's
 *     offsets stay unknown),
 *   1 Fetch per partition leader for up to 32 non-empty DLT partitions (the record at each log
 *     start), plus one single-partition Fetch for a partition whose first record batch did not fit,
 *   1 DescribeConfigs (every DLT and its origins).
 * `calls` counts these. kafkajs may refresh its cached metadata before the Metadata request (at
 * most once a minute on the adapter's client); that refresh is not counted.
 *
 * Requests go to the brokers directly, never through kafkajs's list of "target topics", which
 * fails every later refresh once a topic in it was deleted by someone else; a DLT deleted between
 * two looks is simply missing from the next. No consumer group is joined, nothing is committed:
 * the Fetch is the group-less read the adapter browses with (fetcher.ts), read_committed.
 *
 * The retention clock ("arrival"): Kafka deletes a segment by time once its newest record's
 * timestamp is older than retention.ms, comparing the timestamps as stored: the producer's with
 * message.timestamp.type=CreateTime, the broker's append time with LogAppendTime (kafkajs already
 * hands out the broker's time for LogAppendTime batches). `oldestAt` is that same timestamp of the
 * first letter at each log start, so `oldestAt + retentionMs` is the earliest moment Kafka may
 * delete it, whichever type the topic uses (it may live a little longer: whole segments go). With
 * CreateTime it is the time the dead-lettering producer set: Spring's recoverer lets the producer
 * stamp the send time (arrival in the DLT); Kafka Connect's reporter copies the failed record's
 * original timestamp, so there the clock started when the record was first produced, and the
 * deadline is still right because Kafka counts from the same timestamp.
 */

const READ_COMMITTED = 1;
const EARLIEST = -2;
const LATEST = -1;
/** As the adapter's single-record reads (Kafka returns whole record batches, so a little more than one record). */
const FETCH_PARTITION_BYTES = 64 * 1024;
const PARTITIONS_PER_FETCH = 32;
const MAX_WAIT_MS = 100;
/** Single-partition Fetches per partition at most (past transaction markers and aborted records). */
const FETCHES_PER_PARTITION = 3;
const SINGLE_FETCHES_AT_ONCE = 4;
const RELOOK_AFTER_MS = 250;

export interface InspectDeps {
  config: KafkaConnectionConfig;
  /** The adapter's group-less client, connected; no topic is added to its metadata. */
  cluster(): Promise<InternalCluster>;
  mapError(e: unknown, topic?: string): BrokerError;
}

interface RawPartitionMetadata {
  partitionId: number;
  leader: number;
}

interface RawMetadata {
  topicMetadata: Array<{ topic: string; partitionMetadata: RawPartitionMetadata[] }>;
}

type OffsetsRequest = {
  replicaId: number;
  isolationLevel: number;
  topics: Array<{ topic: string; partitions: Array<{ partition: number; timestamp: number }> }>;
};
type FetchRequest = {
  replicaId: number;
  isolationLevel: number;
  maxWaitTime: number;
  minBytes: number;
  maxBytes: number;
  topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }> }>;
};

/** The kafkajs 2.2.4 Broker requests the look sends (checked at run time, like client.ts does). */
interface LookBroker {
  listOffsets(
    req: OffsetsRequest,
  ): Promise<{ responses: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }> }>;
  describeConfigs(req: {
    resources: Array<{ type: number; name: string; configNames: string[] }>;
    includeSynonyms: boolean;
  }): Promise<{ resources: DescribedResource[] }>;
  fetch(req: FetchRequest): Promise<{ responses: Array<{ topicName: string; partitions: InternalPartitionData[] }> }>;
}

interface LookCluster {
  metadata(args: { topics: string[] }): Promise<RawMetadata>;
  findBroker(args: { nodeId: string }): Promise<LookBroker>;
  findControllerBroker(): Promise<LookBroker>;
}

interface Counter {
  calls: number;
}

/** One DLT partition to read, with its leader and offsets. */
interface Wanted {
  topic: string;
  partition: number;
  leader: number;
  start: bigint;
  end: bigint;
}

function protocolMismatch(what: string): BrokerError {
  return new BrokerError("protocol", {
    message: `kafkajs ${what} missing`,
    userMessage: "This build's Kafka client is not the version the console was tested with (kafkajs 2.2.4).",
  });
}

function lookCluster(c: InternalCluster): LookCluster {
  if (typeof (c as unknown as { metadata?: unknown }).metadata !== "function")
    throw protocolMismatch("Cluster.metadata");
  return c as unknown as LookCluster;
}

async function lookBroker(b: Promise<LookBroker>): Promise<LookBroker> {
  const broker = await b;
  for (const m of ["listOffsets", "describeConfigs", "fetch"] as const)
    if (typeof broker[m] !== "function") throw protocolMismatch(`Broker.${m}`);
  return broker;
}

function groupBy<T, K>(items: T[], key: (t: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const t of items) {
    const k = key(t);
    const list = out.get(k);
    if (list) list.push(t);
    else out.set(k, [t]);
  }
  return out;
}

/** The topic changed under the look (deleted, recreated, leader moved): worth one more look. */
function changedUnderfoot(e: unknown): boolean {
  const types = new Set([
    "UNKNOWN_TOPIC_OR_PARTITION",
    "UNKNOWN_TOPIC_ID",
    "NOT_LEADER_FOR_PARTITION",
    "NOT_LEADER_OR_FOLLOWER",
    "LEADER_NOT_AVAILABLE",
    "FENCED_LEADER_EPOCH",
    "UNKNOWN_LEADER_EPOCH",
  ]);
  let cur = e as { type?: string; originalError?: unknown; cause?: unknown } | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 8; i++) {
    if (cur.type && types.has(cur.type)) return true;
    cur = (cur.originalError ?? cur.cause) as typeof cur;
  }
  return false;
}

export async function inspectKafka(deps: InspectDeps, opts: InspectOptions): Promise<BrokerInspection> {
  const counter: Counter = { calls: 0 };
  try {
    return await look(deps, opts, counter);
  } catch (e) {
    opts.signal?.throwIfAborted();
    if (!changedUnderfoot(e)) throw deps.mapError(e);
  }
  await new Promise((res) => setTimeout(res, RELOOK_AFTER_MS));
  try {
    return await look(deps, opts, counter);
  } catch (e) {
    opts.signal?.throwIfAborted();
    throw deps.mapError(e);
  }
}

async function look(deps: InspectDeps, opts: InspectOptions, counter: Counter): Promise<BrokerInspection> {
  const { config } = deps;
  const { signal } = opts;
  const cluster = lookCluster(await deps.cluster());
  signal?.throwIfAborted();
  counter.calls++;
  const md = await cluster.metadata({ topics: [] });
  const partitionsOf = new Map(md.topicMetadata.map((t) => [t.topic, t.partitionMetadata]));
  const names = dlqNamesOf(config, [...partitionsOf.keys()]);
  const present = names.filter((n) => partitionsOf.has(n));

  const offsets = await listOffsets(
    cluster,
    present.map((topic) => ({ topic, partitions: partitionsOf.get(topic)! })),
    counter,
    signal,
  );
  const wanted: Wanted[] = [];
  for (const topic of present) {
    const leaders = new Map(partitionsOf.get(topic)!.map((p) => [p.partitionId, p.leader]));
    for (const p of offsets.get(topic) ?? [])
      if (p.start < p.end)
        wanted.push({ topic, partition: p.partition, leader: leaders.get(p.partition)!, start: p.start, end: p.end });
  }
  const starts = await readLogStarts(cluster, wanted, counter, signal);

  const entryOf = (name: string) => config.dlqs.find((d) => d.name === name);
  const origins = new Map(
    present.map((n) => {
      const fromHeaders = [...(starts.get(n)?.values() ?? [])].flatMap((s) =>
        s.kind === "letter" && s.origin ? [s.origin] : [],
      );
      return [
        n,
        originsOf(n, {
          configured: entryOf(n)?.origin,
          fromHeaders,
          patterns: config.dltPatterns,
          exists: (t) => partitionsOf.has(t),
        }),
      ] as const;
    }),
  );
  const configs = await describeTopics(
    cluster,
    [...new Set([...present, ...[...origins.values()].flat()])],
    counter,
    signal,
  );

  const dlqs = names.map((n) =>
    vitalsOf(
      n,
      partitionsOf.has(n) ? (offsets.get(n) ?? null) : null,
      starts.get(n) ?? new Map(),
      configs.get(n) ?? null,
    ),
  );
  const facts: DltFacts[] = present.map((n) => ({
    name: n,
    partitions: partitionsOf.get(n)!.length,
    config: configs.get(n) ?? null,
    ordered: entryOf(n)?.ordered === true,
    origins: origins
      .get(n)!
      .map((o) => ({ name: o, partitions: partitionsOf.get(o)!.length, config: configs.get(o) ?? null })),
  }));
  const findings = kafkaFindings(facts, { minRetentionMs: opts.minRetentionMs, bootstrap: config.brokers.join(",") });
  return { dlqs, findings, calls: counter.calls };
}

/**
 * Log start and end offsets (read_committed, as the adapter's depth) of every partition of these
 * topics: two ListOffsets per leader. A topic with a partition without leader gets null.
 */
async function listOffsets(
  cluster: LookCluster,
  topics: Array<{ topic: string; partitions: RawPartitionMetadata[] }>,
  counter: Counter,
  signal?: AbortSignal,
): Promise<Map<string, PartitionOffsets[] | null>> {
  const out = new Map<string, PartitionOffsets[] | null>();
  const asked: Array<{ topic: string; partition: number; leader: number }> = [];
  for (const t of topics) {
    if (t.partitions.some((p) => p.leader < 0)) out.set(t.topic, null);
    else for (const p of t.partitions) asked.push({ topic: t.topic, partition: p.partitionId, leader: p.leader });
  }
  const got = new Map<string, { start?: bigint; end?: bigint }>();
  const key = (topic: string, partition: number) => `${partition}\u0000${topic}`;
  await Promise.all(
    [...groupBy(asked, (a) => a.leader)].map(async ([leader, tps]) => {
      const broker = await lookBroker(cluster.findBroker({ nodeId: String(leader) }));
      const ask = async (byTopic: Array<[string, typeof tps]>) => {
        const once = (timestamp: number) => {
          signal?.throwIfAborted();
          counter.calls++;
          return broker.listOffsets({
            replicaId: -1,
            isolationLevel: READ_COMMITTED,
            topics: byTopic.map(([topic, ps]) => ({
              topic,
              partitions: ps.map((p) => ({ partition: p.partition, timestamp })),
            })),
          });
        };
        const [low, high] = await Promise.all([once(EARLIEST), once(LATEST)]);
        for (const [res, side] of [
          [low, "start"],
          [high, "end"],
        ] as const) {
          for (const r of res.responses)
            for (const p of r.partitions) {
              const k = key(r.topic, p.partition);
              got.set(k, { ...got.get(k), [side]: BigInt(p.offset) });
            }
        }
      };
      const byTopic = [...groupBy(tps, (a) => a.topic)];
      try {
        await ask(byTopic);
      } catch (e) {
        // One partition's error fails the whole answer (kafkajs): topic by topic then, so only that
        // topic's offsets stay unknown (e.g. partitions just added, whose leader is not ready yet).
        // A broker that does not answer fails the look.
        if (!partitionError(e, signal)) throw e;
        if (byTopic.length === 1) return warnOffsets(byTopic[0][0], e);
        for (const one of byTopic) {
          await ask([one]).catch((e2: unknown) => {
            if (!partitionError(e2, signal)) throw e2;
            warnOffsets(one[0], e2);
          });
        }
      }
    }),
  );
  for (const t of topics) {
    if (out.has(t.topic)) continue;
    const parts: PartitionOffsets[] = [];
    for (const p of t.partitions) {
      const g = got.get(key(t.topic, p.partitionId));
      if (g?.start === undefined || g.end === undefined) break;
      parts.push({ partition: p.partitionId, start: g.start, end: g.end });
    }
    out.set(t.topic, parts.length === t.partitions.length ? parts.sort((a, b) => a.partition - b.partition) : null);
  }
  return out;
}

/** A broker's error answer about some partition (not a connection failure, not an abort). */
function partitionError(e: unknown, signal?: AbortSignal): boolean {
  signal?.throwIfAborted();
  return typeof (e as { type?: unknown }).type === "string" && (e as Error).name === "KafkaJSProtocolError";
}

function warnOffsets(topic: string, e: unknown): void {
  console.warn(`[kafka] inspect: offsets of ${topic}: ${(e as Error).message}`);
}

function fetchRequest(parts: Array<{ topic: string; partition: number; at: bigint }>): FetchRequest {
  return {
    replicaId: -1,
    isolationLevel: READ_COMMITTED,
    maxWaitTime: MAX_WAIT_MS,
    minBytes: 1,
    maxBytes: parts.length * FETCH_PARTITION_BYTES,
    topics: [...groupBy(parts, (p) => p.topic)].map(([topic, ps]) => ({
      topic,
      partitions: ps.map((p) => ({
        partition: p.partition,
        fetchOffset: p.at.toString(),
        maxBytes: FETCH_PARTITION_BYTES,
      })),
    })),
  };
}

const partitionData = (res: Awaited<ReturnType<LookBroker["fetch"]>>, w: Wanted) =>
  res.responses.find((r) => r.topicName === w.topic)?.partitions.find((p) => p.partition === w.partition);

/**
 * The first letter at each partition's log start. One Fetch per leader for up to 32 partitions;
 * Kafka returns the first record batch whole only for the first partition of a Fetch, so a
 * partition whose batch did not fit (or whose start is only transaction markers) is read again on
 * its own.
 */
async function readLogStarts(
  cluster: LookCluster,
  wanted: Wanted[],
  counter: Counter,
  signal?: AbortSignal,
): Promise<Map<string, Map<number, LogStart>>> {
  const out = new Map<string, Map<number, LogStart>>();
  const set = (w: Wanted, s: LogStart) => {
    const m = out.get(w.topic) ?? new Map<number, LogStart>();
    m.set(w.partition, s);
    out.set(w.topic, m);
  };
  const again: Array<{ w: Wanted; at: bigint }> = [];
  await Promise.all(
    [...groupBy(wanted, (w) => w.leader)].map(async ([leader, ws]) => {
      const broker = await lookBroker(cluster.findBroker({ nodeId: String(leader) }));
      for (let i = 0; i < ws.length; i += PARTITIONS_PER_FETCH) {
        const chunk = ws.slice(i, i + PARTITIONS_PER_FETCH);
        signal?.throwIfAborted();
        counter.calls++;
        let res: Awaited<ReturnType<LookBroker["fetch"]>>;
        try {
          res = await broker.fetch(fetchRequest(chunk.map((w) => ({ ...w, at: w.start }))));
        } catch {
          // One partition's error (its log start moved since ListOffsets) fails the whole Fetch.
          for (const w of chunk) again.push({ w, at: w.start });
          continue;
        }
        for (const w of chunk) {
          const data = partitionData(res, w);
          const r = data ? logStartOf(data, w.start, w.end) : { found: null, next: null };
          if (r.found) set(w, r.found);
          else again.push({ w, at: r.next ?? w.start });
        }
      }
    }),
  );
  for (let i = 0; i < again.length; i += SINGLE_FETCHES_AT_ONCE) {
    await Promise.all(
      again
        .slice(i, i + SINGLE_FETCHES_AT_ONCE)
        .map(async ({ w, at }) => set(w, await readLogStart(cluster, w, at, counter, signal))),
    );
  }
  return out;
}

async function readLogStart(
  cluster: LookCluster,
  w: Wanted,
  from: bigint,
  counter: Counter,
  signal?: AbortSignal,
): Promise<LogStart> {
  let at = from;
  for (let i = 0; i < FETCHES_PER_PARTITION; i++) {
    signal?.throwIfAborted();
    try {
      const broker = await lookBroker(cluster.findBroker({ nodeId: String(w.leader) }));
      counter.calls++;
      const data = partitionData(await broker.fetch(fetchRequest([{ ...w, at }])), w);
      if (!data) return { kind: "unknown" };
      const r = logStartOf(data, at, w.end);
      if (r.found) return r.found;
      if (r.next === null || r.next <= at) return { kind: "unknown" };
      at = r.next;
    } catch (e) {
      signal?.throwIfAborted();
      if (e instanceof BrokerError) throw e;
      console.warn(`[kafka] inspect: reading the log start of ${w.topic}/${w.partition}: ${(e as Error).message}`);
      return { kind: "unknown" };
    }
  }
  return { kind: "unknown" };
}

/** retention.ms, cleanup.policy and the like of these topics, in one DescribeConfigs. */
async function describeTopics(
  cluster: LookCluster,
  names: string[],
  counter: Counter,
  signal?: AbortSignal,
): Promise<Map<string, TopicConfig>> {
  const out = new Map<string, TopicConfig>();
  if (!names.length) return out;
  signal?.throwIfAborted();
  // Any broker answers for topics; this one is known to be up (kafkajs's "controller" is a live broker).
  const broker = await lookBroker(cluster.findControllerBroker());
  counter.calls++;
  const res = await broker.describeConfigs({
    includeSynonyms: false,
    resources: names.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: CHECKED_CONFIGS })),
  });
  for (const r of res.resources) out.set(r.resourceName, topicConfigOf(r));
  return out;
}
