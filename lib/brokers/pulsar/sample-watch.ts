import { BrokerError } from "@/lib/brokers/contract/errors";
import { type PulsarAdmin, shortName, topicOf, topicPath, type TopicName } from "@/lib/brokers/pulsar/client";
import { missingTopic } from "@/lib/brokers/pulsar/reader";
import { AckState, comparePositions, parseAckedRanges, parsePosition } from "@/lib/brokers/pulsar/message-id";
import type { SampleEvidence, SampleWatchOps, TargetReaders, WatchMark } from "@/lib/brokers/target-readers";

/**
 * The sample watch on Pulsar (`BrokerAdapter.sampleWatch`, lib/brokers/target-readers.ts): the
 * subscriptions on a target topic, and whether one of them acknowledged past the sample's copies.
 * Admin API only (a topic's `stats` and `internalStats`, per partition of a partitioned topic):
 * cursor positions and counters, no message is read or peeked.
 *
 * Readers: the durable subscriptions on the topic (the console's own excepted), with their type,
 * connected consumers and backlog. A non-durable subscription is a reader's cursor (a Reader
 * acknowledges nothing): it is named but not counted. A subscription with no consumer connected
 * reads nothing now, so a topic whose subscriptions all have none is "no reader" too.
 *
 * The mark is each partition's last confirmed entry right after the copies were confirmed: each
 * copy is at or before it. The copies were taken when one subscription that existed at the mark
 * has its mark-delete position (everything up to it acknowledged) at or past the mark on every
 * partition. A subscription made after the mark starts where it was made (the latest entry by
 * default), so its position says nothing about the copies and is not counted. Acknowledgements
 * above the mark-delete position (individual acks of a Shared subscription, while an older message
 * is still unacknowledged) do not name the copies, so they leave the evidence "waiting"; the text
 * then says whether the last entry at the mark is acknowledged. An admin's skip or clear-backlog
 * moves a mark-delete position too, and cannot be told from consumption.
 */

export interface PulsarSampleWatchContext {
  admin: PulsarAdmin;
  /** The console's own subscription on DLQ topics: not a reader of a target. */
  ownSubscription: string;
}

interface InternalStats {
  lastConfirmedEntry?: string;
  cursors?: Record<string, { markDeletePosition?: string; individuallyDeletedMessages?: string }>;
}

interface SubStats {
  msgBacklog?: number;
  unackedMessages?: number;
  type?: string;
  isDurable?: boolean;
  consumers?: unknown[];
}

interface TopicStats {
  subscriptions?: Record<string, SubStats>;
}

/** One partition's (or the non-partitioned topic's) look. */
interface PartLook {
  part: string;
  lastConfirmed: string;
  internal: InternalStats;
  stats: TopicStats;
}

/** A subscription over all partitions. */
interface Sub {
  name: string;
  type: string;
  durable: boolean;
  /** Consumers connected (a consumer of a partitioned topic is counted once). */
  consumers: number;
  backlog: number;
  unacked: number;
}

const MAX_NAMES = 20;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function pulsarSampleWatch(ctx: PulsarSampleWatchContext): SampleWatchOps {
  const { admin } = ctx;

  /** The topic's partitions as topics ([itself] when not partitioned); throws `not_found`. */
  async function look(name: string): Promise<{ t: TopicName; parts: PartLook[] }> {
    let t: TopicName;
    try {
      t = topicOf(name);
    } catch {
      throw new BrokerError("not_found", {
        userMessage: `"${name}" is not a Pulsar topic name: topics are written tenant/namespace/topic.`,
      });
    }
    const one = async (part: TopicName): Promise<PartLook | null> => {
      const what = `read the stats of topic ${shortName(part)}`;
      const [internal, stats] = await Promise.all([
        admin.get<InternalStats>(`persistent/${topicPath(part)}/internalStats`, what, { notFound: "null" }),
        admin.get<TopicStats>(`persistent/${topicPath(part)}/stats`, what, { notFound: "null" }),
      ]);
      if (!internal || !stats) return null;
      return { part: shortName(part), lastConfirmed: internal.lastConfirmedEntry ?? "", internal, stats };
    };
    const whole = await one(t);
    if (whole) return { t, parts: [whole] };
    const meta = await admin.get<{ partitions?: number }>(
      `persistent/${topicPath(t)}/partitions`,
      `read the partitions of topic ${shortName(t)}`,
      { notFound: "null" },
    );
    const n = meta?.partitions ?? 0;
    if (n <= 0) throw missingTopic(t);
    const parts = await Promise.all(
      Array.from({ length: n }, (_, i) => one({ ...t, topic: `${t.topic}-partition-${i}` })),
    );
    if (parts.some((p) => p === null)) throw missingTopic(t);
    return { t, parts: parts as PartLook[] };
  }

  function subsOf(parts: PartLook[]): Sub[] {
    const by = new Map<string, Sub>();
    for (const p of parts) {
      for (const [name, s] of Object.entries(p.stats.subscriptions ?? {})) {
        if (name === ctx.ownSubscription) continue;
        const cur = by.get(name) ?? {
          name,
          type: s.type ?? "?",
          durable: s.isDurable !== false,
          consumers: 0,
          backlog: 0,
          unacked: 0,
        };
        cur.consumers = Math.max(cur.consumers, s.consumers?.length ?? 0);
        cur.backlog += s.msgBacklog ?? 0;
        cur.unacked += s.unackedMessages ?? 0;
        by.set(name, cur);
      }
    }
    return [...by.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  const describeSub = (s: Sub) =>
    s.durable
      ? `subscription ${s.name} (${s.type && s.type !== "None" && s.type !== "?" ? `${s.type}, ` : ""}${plural(s.consumers, "consumer")}, backlog ${s.backlog})`
      : `reader ${s.name} (non-durable, acknowledges nothing)`;

  function readersOf(name: string, parts: PartLook[]): TargetReaders {
    const subs = subsOf(parts);
    const durable = subs.filter((s) => s.durable);
    const connected = durable.filter((s) => s.consumers > 0).length;
    return {
      target: name,
      count: durable.length,
      names: subs.slice(0, MAX_NAMES).map(describeSub),
      summary: durable.length
        ? `${plural(durable.length, "subscription")} on topic "${name}", ${connected} with consumers connected.`
        : `No subscription on topic "${name}".`,
    };
  }

  return {
    async readers(name) {
      return readersOf(name, (await look(name)).parts);
    },

    async mark(name) {
      const { parts } = await look(name);
      const lastConfirmed: Record<string, string> = {};
      const markDeleteAt: Record<string, string> = {};
      for (const p of parts) {
        lastConfirmed[p.part] = p.lastConfirmed;
        for (const [sub, c] of Object.entries(p.internal.cursors ?? {}))
          markDeleteAt[`${p.part}|${sub}`] = c.markDeletePosition ?? "";
      }
      return { broker: "pulsar", topic: name, at: Date.now(), lastConfirmed, markDeleteAt } satisfies WatchMark;
    },

    async evidence(name, mark): Promise<SampleEvidence> {
      const { parts } = await look(name);
      const readers = readersOf(name, parts);
      const out = (state: SampleEvidence["state"], text: string): SampleEvidence => ({
        target: name,
        state,
        text,
        readers,
      });
      const lastConfirmed = (mark.lastConfirmed ?? {}) as Record<string, string>;
      const markDeleteAt = (mark.markDeleteAt ?? {}) as Record<string, string>;
      const multi = parts.length > 1;
      const where = (part: string) => (multi ? `${part.slice(part.lastIndexOf("-partition-") + 1)}: ` : "");

      const subs = subsOf(parts).filter((s) => s.durable);
      const markText = `the mark (the last entry when the sample's copies were confirmed): ${Object.entries(
        lastConfirmed,
      )
        .map(([p, e]) => `${where(p)}${e}`)
        .join(", ")}`;

      /** Per partition: the subscription's acknowledged position now against the mark; null when it did not exist at the mark. */
      const progress = (sub: string) =>
        parts.map((p) => {
          const markPos = parsePosition(lastConfirmed[p.part]);
          const existed = `${p.part}|${sub}` in markDeleteAt;
          const cursor = p.internal.cursors?.[sub];
          const md = parsePosition(cursor?.markDeletePosition);
          const past = existed && !!markPos && !!md && comparePositions(md, markPos) >= 0;
          const lastAcked =
            !!markPos &&
            !!md &&
            new AckState(md, parseAckedRanges(cursor?.individuallyDeletedMessages)).isAcked(markPos);
          return {
            part: p.part,
            existed,
            markPos: lastConfirmed[p.part],
            md: cursor?.markDeletePosition ?? "?",
            past,
            lastAcked,
          };
        });

      const taken = subs.find((s) => progress(s.name).every((p) => p.past));
      if (taken)
        return out(
          "taken",
          `Subscription "${taken.name}" acknowledged past the sample's copies on topic "${name}": ${progress(taken.name)
            .map((p) => `${where(p.part)}acknowledged up to ${p.md}, at or past the mark ${p.markPos}`)
            .join("; ")}. ${readers.summary}`,
        );

      const subText = (s: Sub) => {
        const prog = progress(s.name);
        if (prog.some((p) => !p.existed))
          return `${describeSub(s)} was made after the sample's copies were confirmed: where it started says nothing about them`;
        const behind = prog.filter((p) => !p.past);
        return `${describeSub(s)}: acknowledged up to ${behind
          .map(
            (p) =>
              `${where(p.part)}${p.md} (mark ${p.markPos}${p.lastAcked ? ", whose last entry is acknowledged on its own, earlier ones not" : ""})`,
          )
          .join("; ")}, ${s.unacked} delivered and not acknowledged`;
      };

      if (!subs.length)
        return out(
          "no_reader",
          `No subscription on topic "${name}": nothing reads it, so the copies' not coming back proves nothing; ${markText}.`,
        );
      if (!subs.some((s) => s.consumers > 0))
        return out(
          "no_reader",
          `No consumer is connected to any subscription on topic "${name}": nothing reads it now, so the copies' not coming back proves nothing. ${subs
            .slice(0, 5)
            .map(subText)
            .join(". ")}.`,
        );
      return out(
        "waiting",
        `No subscription on topic "${name}" has acknowledged past the sample's copies yet: ${subs
          .slice(0, 5)
          .map(subText)
          .join(". ")}${subs.length > 5 ? `. And ${subs.length - 5} more subscriptions` : ""}.`,
      );
    },
  };
}
