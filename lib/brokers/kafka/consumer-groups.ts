import "server-only";
import { AssignerProtocol } from "kafkajs";
import type { BrokerError } from "@/lib/brokers/contract/errors";
import type {
  ConsumerGroup,
  ConsumerGroupsRound,
  GroupMember,
  GroupPartition,
  SkippedGroup,
} from "@/lib/brokers/contract/consumer-groups";
import type { InternalCluster } from "@/lib/brokers/kafka/client";
import { fetchGroupOffsets, supportsBatchedOffsetFetch, type GroupOffsets } from "@/lib/brokers/kafka/offset-fetch";
import type { RawRequestBroker } from "@/lib/brokers/kafka/topic-ids";

/**
 * Consumer groups of one Kafka connection, as the stuck-partition sampler sees them: every
 * classic consumer group with its state, members and, per topic-partition, the
 * committed offset, the log's start and end (high watermark) and the lag. One round costs a
 * constant number of requests per cluster, whatever the number of groups and topics:
 *   1 Metadata (brokers, every topic's partitions and leaders),
 *   1 ListGroups per broker (a broker lists the groups it coordinates),
 *   1 DescribeGroups per coordinator with groups (all its groups at once; when one group's answer
 *     is an error kafkajs fails the whole answer, so then 1 more per group of that coordinator),
 *   1 OffsetFetch v8 per coordinator with groups (all its groups at once: offset-fetch.ts),
 *   2 ListOffsets per partition leader (log start and high watermark of every partition at once).
 * `calls` counts them. Nothing is joined or committed; the group coordinator is the broker that
 * listed the group, so no FindCoordinator per group is needed (a group that moved between the two
 * requests comes back NOT_COORDINATOR and is reported with a problem until the next round).
 * `flagStuckPartitions` (below) finds stuck partitions in a series of rounds; reading the record a
 * stuck partition waits on and moving it to the DLT are in consumer-group-skip.ts.
 */

/** Group protocol types read: classic consumer groups, and "" (groups that only commit offsets). */
const READ_PROTOCOL_TYPES = new Set(["consumer", ""]);
const EARLIEST = -2;
const LATEST = -1;
const READ_UNCOMMITTED = 0;

export interface ReadGroupsDeps {
  /** A group-less client (client.ts `createCluster`), connected; no topic is added to its metadata. */
  cluster(): Promise<InternalCluster>;
  mapError(e: unknown, topic?: string): BrokerError;
}

interface RawBrokerMeta {
  nodeId: number;
}

interface RawMetadata {
  brokers: RawBrokerMeta[];
  topicMetadata: Array<{ topic: string; partitionMetadata: Array<{ partitionId: number; leader: number }> }>;
}

type RawMember = { memberId: string; clientId: string; clientHost: string; memberAssignment: Buffer | null };
type RawGroup = {
  errorCode: number;
  groupId: string;
  state: string;
  protocolType: string;
  protocol: string;
  members: RawMember[];
};

/** The kafkajs 2.2.4 Broker requests a round sends (checked at run time, as client.ts does). */
interface GroupsBroker extends RawRequestBroker {
  listGroups(): Promise<{ groups: Array<{ groupId: string; protocolType: string }> }>;
  describeGroups(req: { groupIds: string[] }): Promise<{ groups: RawGroup[] }>;
  listOffsets(req: {
    replicaId: number;
    isolationLevel: number;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; timestamp: number }> }>;
  }): Promise<{
    responses: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>;
  }>;
}

interface GroupsCluster {
  metadata(args: { topics: string[] }): Promise<RawMetadata>;
  findBroker(args: { nodeId: string }): Promise<GroupsBroker>;
}

function mismatch(what: string): Error {
  return Object.assign(new Error(`kafkajs ${what} missing (kafkajs upgraded?)`), { name: "KafkaJSProtocolMismatch" });
}

function groupsCluster(c: InternalCluster): GroupsCluster {
  if (typeof (c as unknown as { metadata?: unknown }).metadata !== "function") throw mismatch("Cluster.metadata");
  return c as unknown as GroupsCluster;
}

async function groupsBroker(b: Promise<GroupsBroker>): Promise<GroupsBroker> {
  const broker = await b;
  for (const m of ["listGroups", "describeGroups", "listOffsets"] as const)
    if (typeof broker[m] !== "function") throw mismatch(`Broker.${m}`);
  if (typeof broker.connectionPool?.send !== "function") throw mismatch("Broker.connectionPool.send");
  return broker;
}

const KAFKA_ERRORS: Record<number, string> = {
  14: "COORDINATOR_LOAD_IN_PROGRESS",
  15: "COORDINATOR_NOT_AVAILABLE",
  16: "NOT_COORDINATOR",
  30: "GROUP_AUTHORIZATION_FAILED",
  69: "GROUP_ID_NOT_FOUND",
  88: "UNSTABLE_OFFSET_COMMIT",
};
const kafkaError = (code: number) => KAFKA_ERRORS[code] ?? `Kafka error ${code}`;

/** A member's assigned topic-partitions from the consumer protocol's assignment bytes. */
export function decodeAssignment(bytes: Buffer | null): Array<{ topic: string; partitions: number[] }> {
  if (!bytes?.length) return [];
  try {
    const decoded = AssignerProtocol.MemberAssignment.decode(bytes);
    if (!decoded) return [];
    return Object.entries(decoded.assignment)
      .map(([topic, partitions]) => ({ topic, partitions: [...partitions].sort((a, b) => a - b) }))
      .sort((a, b) => a.topic.localeCompare(b.topic));
  } catch {
    return [];
  }
}

/** Every consumer group of the connection, now (see the file's comment for the requests sent). */
export async function readConsumerGroups(
  deps: ReadGroupsDeps,
  opts: { signal?: AbortSignal } = {},
): Promise<ConsumerGroupsRound> {
  const { signal } = opts;
  const counter = { calls: 0 };
  let cluster: GroupsCluster;
  let md: RawMetadata;
  try {
    cluster = groupsCluster(await deps.cluster());
    signal?.throwIfAborted();
    counter.calls++;
    md = await cluster.metadata({ topics: [] });
  } catch (e) {
    signal?.throwIfAborted();
    throw deps.mapError(e);
  }
  const sampledAt = new Date();

  // 1. Each broker lists the groups it coordinates.
  const listed = await Promise.all(
    md.brokers.map(async (b) => {
      signal?.throwIfAborted();
      try {
        const broker = await groupsBroker(cluster.findBroker({ nodeId: String(b.nodeId) }));
        counter.calls++;
        return { nodeId: b.nodeId, broker, groups: (await broker.listGroups()).groups, error: null as unknown };
      } catch (e) {
        return { nodeId: b.nodeId, broker: null, groups: [], error: e };
      }
    }),
  );
  const failed = listed.filter((l) => l.error);
  if (failed.length === listed.length && failed.length) {
    signal?.throwIfAborted();
    throw deps.mapError(failed[0].error);
  }
  for (const f of failed)
    console.warn(`[kafka] consumer groups: broker ${f.nodeId} did not list its groups: ${(f.error as Error).message}`);

  const skipped: SkippedGroup[] = [];
  const seen = new Set<string>();
  const byCoordinator: Array<{ nodeId: number; broker: GroupsBroker; groupIds: string[] }> = [];
  for (const l of listed) {
    if (!l.broker) continue;
    const ids: string[] = [];
    for (const g of l.groups) {
      if (seen.has(g.groupId)) continue;
      seen.add(g.groupId);
      if (!READ_PROTOCOL_TYPES.has(g.protocolType))
        skipped.push({
          groupId: g.groupId,
          protocolType: g.protocolType,
          reason: `a ${g.protocolType} group, not a consumer group`,
        });
      else ids.push(g.groupId);
    }
    if (ids.length) byCoordinator.push({ nodeId: l.nodeId, broker: l.broker, groupIds: ids.sort() });
  }

  // 2. Per coordinator: all its groups described, and all their committed offsets, at once.
  const perCoordinator = await Promise.all(
    byCoordinator.map(async ({ nodeId, broker, groupIds }) => {
      signal?.throwIfAborted();
      const [described, offsets] = await Promise.all([
        describeAll(broker, groupIds, counter),
        offsetsOf(broker, groupIds, counter),
      ]);
      return { nodeId, groupIds, described, offsets };
    }),
  );

  // 3. Log start and end of every partition any group committed or is assigned.
  const groups: ConsumerGroup[] = [];
  const wanted = new Map<string, Set<number>>();
  const want = (topic: string, partition: number) => {
    const s = wanted.get(topic) ?? new Set<number>();
    s.add(partition);
    wanted.set(topic, s);
  };
  for (const { nodeId, groupIds, described, offsets } of perCoordinator) {
    for (const groupId of groupIds) {
      const d = described.get(groupId);
      const o = offsets.get(groupId);
      const problems: string[] = [];
      if (!d || "error" in d)
        problems.push(`its members could not be read (${d && "error" in d ? d.error : "no answer"})`);
      if (!o || "error" in o)
        problems.push(`its committed offsets could not be read (${o && "error" in o ? o.error : "no answer"})`);
      const raw = d && !("error" in d) ? d.group : null;
      const members: GroupMember[] = (raw?.members ?? []).map((m) => ({
        memberId: m.memberId,
        clientId: m.clientId,
        host: m.clientHost,
        assignments: raw!.protocolType === "consumer" ? decodeAssignment(m.memberAssignment) : [],
      }));
      const parts = new Map<string, GroupPartition>();
      const key = (t: string, p: number) => `${p}\u0000${t}`;
      for (const c of o && !("error" in o) ? o.offsets : []) {
        if (c.errorCode !== 0)
          problems.push(`the committed offset of ${c.topic}/${c.partition} is unknown (${kafkaError(c.errorCode)})`);
        parts.set(key(c.topic, c.partition), {
          topic: c.topic,
          partition: c.partition,
          committed: c.errorCode === 0 ? c.offset : null,
          start: null,
          end: null,
          lag: null,
          memberId: null,
        });
      }
      for (const m of members) {
        for (const a of m.assignments) {
          for (const p of a.partitions) {
            const k = key(a.topic, p);
            const cur = parts.get(k) ?? {
              topic: a.topic,
              partition: p,
              committed: null,
              start: null,
              end: null,
              lag: null,
              memberId: null,
            };
            cur.memberId = m.memberId;
            parts.set(k, cur);
          }
        }
      }
      if (!parts.size && !members.length && !problems.length) {
        skipped.push({ groupId, protocolType: raw?.protocolType ?? "", reason: "no members and no committed offsets" });
        continue;
      }
      const partitions = [...parts.values()].sort(
        (a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition,
      );
      for (const p of partitions) want(p.topic, p.partition);
      groups.push({
        groupId,
        protocolType: raw?.protocolType ?? "",
        state: raw?.state ?? "",
        protocol: raw?.protocol ?? "",
        coordinator: nodeId,
        members,
        partitions,
        problem: problems.length ? `This round ${problems.join("; ")}.` : null,
      });
    }
  }

  const logOffsets = await listLogOffsets(cluster, md, wanted, counter, signal);
  for (const g of groups) {
    for (const p of g.partitions) {
      const lo = logOffsets.get(`${p.partition}\u0000${p.topic}`);
      if (!lo) continue;
      p.start = lo.start;
      p.end = lo.end;
      const from = p.committed ?? lo.start;
      p.lag = lo.end > from ? lo.end - from : 0n;
    }
  }
  groups.sort((a, b) => a.groupId.localeCompare(b.groupId));
  skipped.sort((a, b) => a.groupId.localeCompare(b.groupId));
  return {
    sampledAt,
    groups,
    skipped,
    brokersNotListed: failed.map((f) => f.nodeId).sort((a, b) => a - b),
    calls: counter.calls,
  };
}

type Described = { group: RawGroup } | { error: string };

async function describeAll(
  broker: GroupsBroker,
  groupIds: string[],
  counter: { calls: number },
): Promise<Map<string, Described>> {
  const out = new Map<string, Described>();
  const take = (groups: RawGroup[]) => {
    for (const g of groups) out.set(g.groupId, g.errorCode ? { error: kafkaError(g.errorCode) } : { group: g });
  };
  try {
    counter.calls++;
    take((await broker.describeGroups({ groupIds })).groups);
    return out;
  } catch (e) {
    // kafkajs fails the whole answer on the first group's error: then group by group.
    if (groupIds.length === 1) {
      out.set(groupIds[0], { error: errorText(e) });
      return out;
    }
  }
  await Promise.all(
    groupIds.map(async (groupId) => {
      try {
        counter.calls++;
        take((await broker.describeGroups({ groupIds: [groupId] })).groups);
      } catch (e) {
        out.set(groupId, { error: errorText(e) });
      }
    }),
  );
  return out;
}

type Offsets = GroupOffsets | { error: string };

async function offsetsOf(
  broker: GroupsBroker,
  groupIds: string[],
  counter: { calls: number },
): Promise<Map<string, Offsets>> {
  const out = new Map<string, Offsets>();
  if (!supportsBatchedOffsetFetch(broker)) {
    for (const g of groupIds) out.set(g, { error: "the broker is older than Kafka 3.0 (OffsetFetch v8)" });
    return out;
  }
  try {
    counter.calls++;
    for (const g of await fetchGroupOffsets(broker, groupIds))
      out.set(g.groupId, g.errorCode ? { error: kafkaError(g.errorCode) } : g);
  } catch (e) {
    for (const g of groupIds) out.set(g, { error: errorText(e) });
  }
  return out;
}

const errorText = (e: unknown) => (e as { type?: string }).type ?? (e as Error).message ?? String(e);

/** Log start and high watermark (read_uncommitted) of the wanted partitions: two ListOffsets per leader. */
async function listLogOffsets(
  cluster: GroupsCluster,
  md: RawMetadata,
  wanted: Map<string, Set<number>>,
  counter: { calls: number },
  signal?: AbortSignal,
): Promise<Map<string, { start: bigint; end: bigint }>> {
  const out = new Map<string, { start: bigint; end: bigint }>();
  const byLeader = new Map<number, Map<string, number[]>>();
  const topics = new Map(
    md.topicMetadata.map((t) => [t.topic, new Map(t.partitionMetadata.map((p) => [p.partitionId, p.leader]))]),
  );
  for (const [topic, partitions] of wanted) {
    const leaders = topics.get(topic);
    if (!leaders) continue; // deleted topic: its offsets stay unknown
    for (const p of partitions) {
      const leader = leaders.get(p);
      if (leader === undefined || leader < 0) continue;
      const m = byLeader.get(leader) ?? new Map<string, number[]>();
      m.set(topic, [...(m.get(topic) ?? []), p]);
      byLeader.set(leader, m);
    }
  }
  await Promise.all(
    [...byLeader].map(async ([leader, byTopic]) => {
      const ask = async (entries: Array<[string, number[]]>) => {
        const broker = await groupsBroker(cluster.findBroker({ nodeId: String(leader) }));
        const once = (timestamp: number) => {
          signal?.throwIfAborted();
          counter.calls++;
          return broker.listOffsets({
            replicaId: -1,
            isolationLevel: READ_UNCOMMITTED,
            topics: entries.map(([topic, ps]) => ({
              topic,
              partitions: ps.map((partition) => ({ partition, timestamp })),
            })),
          });
        };
        const [low, high] = await Promise.all([once(EARLIEST), once(LATEST)]);
        const starts = new Map<string, bigint>();
        for (const r of low.responses)
          for (const p of r.partitions) starts.set(`${p.partition}\u0000${r.topic}`, BigInt(p.offset));
        for (const r of high.responses) {
          for (const p of r.partitions) {
            const k = `${p.partition}\u0000${r.topic}`;
            const start = starts.get(k);
            if (start !== undefined) out.set(k, { start, end: BigInt(p.offset) });
          }
        }
      };
      const entries = [...byTopic];
      try {
        await ask(entries);
      } catch (e) {
        signal?.throwIfAborted();
        // One partition's error fails kafkajs's whole answer: topic by topic then, so only that topic stays unknown.
        if (entries.length === 1)
          return console.warn(`[kafka] consumer groups: offsets of ${entries[0][0]}: ${(e as Error).message}`);
        for (const one of entries)
          await ask([one]).catch((e2: unknown) =>
            console.warn(`[kafka] consumer groups: offsets of ${one[0]}: ${(e2 as Error).message}`),
          );
      }
    }),
  );
  return out;
}

/** One partition of one group in one round (what the sampler keeps per round). */
export interface GroupSample {
  group: string;
  topic: string;
  partition: number;
  committed: bigint | null;
  /** High watermark at `sampledAt`. */
  end: bigint;
  /** Log start at `sampledAt`: the lag of a partition without committed offset counts from it (0 when absent). */
  start?: bigint | null;
  sampledAt: Date | number;
}

export interface StuckPartition {
  group: string;
  topic: string;
  partition: number;
  /** The committed offset it is stuck at (null: none committed yet): the record there is the likely poison one. */
  committed: bigint | null;
  end: bigint;
  lag: bigint;
  /** The first sample that showed this committed offset with lag, without a move since. */
  since: Date;
  /** From `since` to the latest sample. */
  stuckForMs: number;
  /**
   * Every partition of the group that has lag in its latest sample is stuck too: more likely a
   * consumer that is down or scaled to zero than one poison record.
   */
  groupWide: boolean;
}

export const DEFAULT_STUCK_AFTER_MS = 5 * 60_000;

const msOf = (t: Date | number) => (typeof t === "number" ? t : t.getTime());
const lagOf = (s: GroupSample) => {
  const from = s.committed ?? s.start ?? 0n;
  return s.end > from ? s.end - from : 0n;
};

/**
 * Partitions whose committed offset has not moved for at least `stuckAfterMs` (default 5 minutes)
 * while they had lag, from samples taken over time (any order, any number of groups). Per
 * partition, the run of its latest samples with the same committed offset and lag > 0 is taken:
 * stuck when that run spans `stuckAfterMs`. A committed offset that moved (forwards or back), or a
 * sample without lag (caught up), starts the run again. A partition without committed offset but
 * with lag counts from its first such sample. Only the samples given count: when they start after
 * the partition got stuck, `since` is the first sample's time.
 */
export function flagStuckPartitions(samples: GroupSample[], opts: { stuckAfterMs?: number } = {}): StuckPartition[] {
  const after = opts.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
  const series = new Map<string, GroupSample[]>();
  for (const s of samples) {
    const k = JSON.stringify([s.group, s.topic, s.partition]);
    const list = series.get(k);
    if (list) list.push(s);
    else series.set(k, [s]);
  }
  const flagged: StuckPartition[] = [];
  const lagging = new Map<string, number>();
  for (const list of series.values()) {
    list.sort((a, b) => msOf(a.sampledAt) - msOf(b.sampledAt));
    const last = list[list.length - 1];
    const lag = lagOf(last);
    if (lag <= 0n) continue;
    lagging.set(last.group, (lagging.get(last.group) ?? 0) + 1);
    let first = last;
    for (let i = list.length - 2; i >= 0; i--) {
      const s = list[i];
      if (s.committed !== last.committed || lagOf(s) <= 0n) break;
      first = s;
    }
    const stuckForMs = msOf(last.sampledAt) - msOf(first.sampledAt);
    if (stuckForMs < after) continue;
    flagged.push({
      group: last.group,
      topic: last.topic,
      partition: last.partition,
      committed: last.committed,
      end: last.end,
      lag,
      since: new Date(msOf(first.sampledAt)),
      stuckForMs,
      groupWide: false,
    });
  }
  const stuckPerGroup = new Map<string, number>();
  for (const f of flagged) stuckPerGroup.set(f.group, (stuckPerGroup.get(f.group) ?? 0) + 1);
  for (const f of flagged)
    f.groupWide = stuckPerGroup.get(f.group) === lagging.get(f.group) && (lagging.get(f.group) ?? 0) > 1;
  return flagged.sort(
    (a, b) => a.group.localeCompare(b.group) || a.topic.localeCompare(b.topic) || a.partition - b.partition,
  );
}

/** The samples of one round, for `flagStuckPartitions`. */
export function samplesOf(round: ConsumerGroupsRound): GroupSample[] {
  const out: GroupSample[] = [];
  for (const g of round.groups) {
    for (const p of g.partitions) {
      if (p.end === null) continue;
      out.push({
        group: g.groupId,
        topic: p.topic,
        partition: p.partition,
        committed: p.committed,
        end: p.end,
        start: p.start,
        sampledAt: round.sampledAt,
      });
    }
  }
  return out;
}
