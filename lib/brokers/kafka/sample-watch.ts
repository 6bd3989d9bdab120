import "server-only";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { ConsumerGroup, ConsumerGroupsRound } from "@/lib/brokers/contract/consumer-groups";
import type { SampleEvidence, SampleWatchOps, TargetReaders, WatchMark } from "@/lib/brokers/target-readers";

/**
 * The sample watch on Kafka (`BrokerAdapter.sampleWatch`, lib/brokers/target-readers.ts): which
 * consumer groups read a target topic, and whether one of them committed past the sample's copies.
 * Positions only: the topic's log start and end offsets (ListOffsets) and every group's committed
 * offsets and members (consumer-groups.ts, a constant number of requests); no record is fetched.
 *
 * Readers: the consumer groups with a committed offset on the topic or a member assigned one of its
 * partitions. A classic group in state Empty (no member) reads nothing now; a group that only
 * commits offsets (protocol type "", its consumers assign partitions themselves) has no members
 * the broker could list, so it counts as a reader whose activity cannot be seen.
 *
 * The mark is the topic's end offsets right after the copies were confirmed: each copy is below its
 * partition's end. The topic's name does not say which partition a copy went to (the partitioner
 * chose by key), so the copies were taken when one group's committed offset is at or past the
 * mark's end on every partition that held records at the mark. A group lagging on a partition that
 * got no copy keeps the evidence "waiting"; the text names the partitions still behind. A
 * committed offset is the next record the group will read: at or past the end means every record
 * before it was processed (as far as the application commits after processing).
 */

export interface KafkaSampleWatchContext {
  /** Log start and end of every partition now; throws `not_found` when the topic does not exist. */
  topicState(topic: string): Promise<{ partitions: Array<{ partition: number; start: bigint; end: bigint }> }>;
  /** Every consumer group with its members and committed offsets (consumer-groups.ts). */
  groups(): Promise<ConsumerGroupsRound>;
}

const MAX_NAMES = 20;
const MAX_PARTS = 8;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

interface GroupOnTopic {
  group: ConsumerGroup;
  /** Partition → committed offset on this topic (null: assigned, never committed). */
  committed: Map<number, bigint | null>;
  /** Members assigned a partition of this topic. */
  members: number;
  /** Reads now, as far as the broker shows: members assigned, or a group that only commits offsets. */
  active: boolean;
}

function groupsOn(round: ConsumerGroupsRound, topic: string): GroupOnTopic[] {
  const out: GroupOnTopic[] = [];
  for (const group of round.groups) {
    const parts = group.partitions.filter((p) => p.topic === topic && (p.committed !== null || p.memberId !== null));
    if (!parts.length) continue;
    const members = new Set(parts.map((p) => p.memberId).filter((m): m is string => m !== null)).size;
    out.push({
      group,
      committed: new Map(parts.map((p) => [p.partition, p.committed])),
      members,
      active: members > 0 || group.protocolType === "",
    });
  }
  return out;
}

function describeGroup(g: GroupOnTopic, partitions: number): string {
  const committed = [...g.committed.values()].filter((c) => c !== null).length;
  const who =
    g.group.protocolType === ""
      ? "commits offsets only, its consumers are not listed"
      : `${g.group.state || "state unknown"}, ${plural(g.members, "member")} on this topic`;
  return `group ${g.group.groupId} (${who}; committed on ${committed} of ${partitions} partitions)${
    g.group.problem ? ` [${g.group.problem}]` : ""
  }`;
}

function notListedNote(round: ConsumerGroupsRound): string {
  const n = round.brokersNotListed;
  return n.length
    ? ` ${n.length === 1 ? "Broker" : "Brokers"} ${n.join(", ")} did not list ${n.length === 1 ? "its" : "their"} groups: a group ${n.length === 1 ? "it coordinates" : "they coordinate"} is not seen here.`
    : "";
}

export function kafkaSampleWatch(ctx: KafkaSampleWatchContext): SampleWatchOps {
  async function state(topic: string) {
    try {
      return await ctx.topicState(topic);
    } catch (e) {
      if (e instanceof BrokerError && e.kind === "not_found")
        throw new BrokerError("not_found", {
          message: e.message,
          cause: e,
          userMessage: `Topic "${topic}" does not exist on Kafka. It may have been deleted.`,
        });
      throw e;
    }
  }

  function readersOf(topic: string, partitions: number, round: ConsumerGroupsRound): TargetReaders {
    const on = groupsOn(round, topic);
    const withMembers = on.filter((g) => g.members > 0).length;
    const commitOnly = on.filter((g) => g.members === 0 && g.group.protocolType === "").length;
    const summary = on.length
      ? `${plural(on.length, "consumer group")} on topic "${topic}": ${withMembers} with members assigned now${
          commitOnly ? `, ${commitOnly} committing offsets for consumers the broker does not list` : ""
        }.${notListedNote(round)}`
      : `No consumer group has committed offsets on topic "${topic}" or is assigned to it.${notListedNote(round)}`;
    return {
      target: topic,
      count: on.length,
      names: on.slice(0, MAX_NAMES).map((g) => describeGroup(g, partitions)),
      summary,
    };
  }

  return {
    async readers(topic) {
      const s = await state(topic);
      return readersOf(topic, s.partitions.length, await ctx.groups());
    },

    async mark(topic) {
      const s = await state(topic);
      const ends: Record<string, string> = {};
      const starts: Record<string, string> = {};
      for (const p of s.partitions) {
        ends[p.partition] = String(p.end);
        starts[p.partition] = String(p.start);
      }
      return { broker: "kafka", topic, at: Date.now(), ends, starts } satisfies WatchMark;
    },

    async evidence(topic, mark): Promise<SampleEvidence> {
      const s = await state(topic);
      const round = await ctx.groups();
      const readers = readersOf(topic, s.partitions.length, round);
      const out = (st: SampleEvidence["state"], text: string): SampleEvidence => ({
        target: topic,
        state: st,
        text,
        readers,
      });
      const ends = (mark.ends ?? {}) as Record<string, string>;
      const starts = (mark.starts ?? {}) as Record<string, string>;
      // The partitions that held records at the mark: a copy is in one of them, below its end.
      const held = Object.entries(ends)
        .map(([p, e]) => ({ partition: Number(p), end: BigInt(e), start: BigInt(starts[p] ?? "0") }))
        .filter((p) => p.end > p.start)
        .sort((a, b) => a.partition - b.partition);
      const markText = `the mark (right after the copies were confirmed): ${held
        .slice(0, MAX_PARTS)
        .map((p) => `partition ${p.partition} ended at ${p.end}`)
        .join(", ")}${held.length > MAX_PARTS ? `, and ${held.length - MAX_PARTS} more` : ""}`;
      if (!held.length)
        return out(
          "unknown",
          `Topic "${topic}" held no record when the sample's copies were confirmed, so there is nothing to judge against. ${readers.summary}`,
        );

      const on = groupsOn(round, topic);
      const behindOf = (g: GroupOnTopic) =>
        held.filter((p) => {
          const c = g.committed.get(p.partition);
          return c === undefined || c === null || c < p.end;
        });
      const past = on.find((g) => behindOf(g).length === 0);
      if (past)
        return out(
          "taken",
          `Consumer group "${past.group.groupId}" committed past the sample's copies on topic "${topic}": ${held
            .slice(0, MAX_PARTS)
            .map((p) => `partition ${p.partition} committed ${past.committed.get(p.partition)}, at or past ${p.end}`)
            .join(
              "; ",
            )}${held.length > MAX_PARTS ? `; and ${held.length - MAX_PARTS} more partitions` : ""}. ${readers.summary}`,
        );

      const behindText = (g: GroupOnTopic) => {
        const behind = behindOf(g);
        return `${describeGroup(g, s.partitions.length)}: at or past the mark on ${held.length - behind.length} of ${held.length} partitions holding records (${behind
          .slice(0, MAX_PARTS)
          .map((p) => {
            const c = g.committed.get(p.partition);
            return `partition ${p.partition}: ${c === undefined || c === null ? "no committed offset" : `committed ${c}`}, mark ${p.end}`;
          })
          .join("; ")}${behind.length > MAX_PARTS ? `; and ${behind.length - MAX_PARTS} more` : ""})`;
      };

      if (!on.length)
        return out(
          round.brokersNotListed.length ? "unknown" : "no_reader",
          `No consumer group has committed offsets on topic "${topic}" or is assigned to it: nothing reads it, so the copies' not coming back proves nothing; ${markText}.${notListedNote(round)}`,
        );
      if (!on.some((g) => g.active))
        return out(
          round.brokersNotListed.length ? "unknown" : "no_reader",
          `No consumer group reads topic "${topic}" now (no member is assigned to it), so the copies' not coming back proves nothing: ${on
            .slice(0, 5)
            .map(behindText)
            .join(". ")}.${notListedNote(round)}`,
        );
      return out(
        "waiting",
        `No consumer group has committed past the sample's copies on topic "${topic}" yet: ${on
          .slice(0, 5)
          .map(behindText)
          .join(". ")}${on.length > 5 ? `. And ${on.length - 5} more groups` : ""}.${notListedNote(round)}`,
      );
    },
  };
}
