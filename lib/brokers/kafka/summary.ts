import "server-only";
/**
 * Which topics of a Kafka connection are DLQs (configured, matched by the DLT patterns, or named by
 * a share group) and each one's summary: partitions with handled counts and the age of the oldest
 * unhandled letter, retention facts and warnings, and the origins its letters name.
 */
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { DlqSummary, PartitionSummary } from "@/lib/brokers/contract/dlq";
import type { DlqWarning, HeaderEntry } from "@/lib/brokers/contract/letter";
import { numberValue, timestampValue } from "@/lib/brokers/display";
import { matchDeadLetterTopics } from "@/lib/brokers/kafka/discovery";
import type { HandledStore } from "@/lib/brokers/kafka/handled-store";
import { decodeKafkajsHeaders, originOf } from "@/lib/brokers/kafka/headers";
import { shareGroupDlqTopics } from "@/lib/brokers/kafka/group-configs";
import { formatDuration, retentionWarnings, type TopicConfig } from "@/lib/brokers/kafka/retention";
import type { RawRequestBroker } from "@/lib/brokers/kafka/topic-ids";
import type { KafkaTopics } from "@/lib/brokers/kafka/topics";

export class KafkaDlqs {
  /** Share groups' DLQ topics (shareGroupDlqNames), read at most every 30 s. */
  private shareDlqs: { at: number; names: Set<string> } | null = null;
  private shareDlqWarned = false;

  constructor(
    private readonly topics: KafkaTopics,
    private readonly store: HandledStore | null,
    /** Warn when the oldest unhandled letter has lived this share of the topic's retention. */
    private readonly warnShare: number,
  ) {}

  private get config() {
    return this.topics.config;
  }

  private get connectionId() {
    return this.topics.connectionId;
  }

  /**
   * The DLQ topics share groups name in their configuration (`errors.deadletterqueue.topic.name`,
   * KIP-1191): one ListGroups and one DescribeConfigs for all share groups (group-configs.ts). A
   * help to the patterns, not a must: a broker that cannot answer (before Kafka 4.4, or an ACL)
   * leaves the patterns alone, said once in the log.
   */
  private async shareGroupDlqNames(topics: string[]): Promise<Set<string>> {
    if (!this.config.discover || !this.config.shareGroupDlqs || topics.length === 0) return new Set();
    if (this.shareDlqs && Date.now() - this.shareDlqs.at < 30_000) return this.shareDlqs.names;
    let names = new Set<string>();
    try {
      const groups = (await (await this.topics.getAdmin()).listGroups()).groups
        .filter((g) => g.protocolType === "share")
        .map((g) => g.groupId);
      if (groups.length > 0) {
        // A raw request needs the client's metadata loaded: any existing topic will do.
        const c = await this.topics.getCluster(topics[0]);
        const named = await shareGroupDlqTopics((await c.findControllerBroker()) as RawRequestBroker, groups);
        names = new Set([...(named?.values() ?? [])].filter((t) => topics.includes(t)));
      }
    } catch (e) {
      if (!this.shareDlqWarned)
        console.warn(
          `[kafka] ${this.connectionId}: the share groups' DLQ topics could not be read (${this.topics.err(e).userMessage}); discovery goes by the patterns.`,
        );
      this.shareDlqWarned = true;
    }
    this.shareDlqs = { at: Date.now(), names };
    return names;
  }

  /** Where the console knows `name` from; not_found when it is no DLQ the console knows or does not exist. */
  async known(name: string): Promise<DlqSummary["source"]> {
    const topics = await this.topics.listTopicNames();
    const configured = this.topics.configEntry(name) !== undefined;
    const discovered =
      this.config.discover &&
      (matchDeadLetterTopics([name], this.config.dltPatterns).length === 1 ||
        (await this.shareGroupDlqNames(topics)).has(name));
    if (!topics.includes(name) || (!configured && !discovered)) throw this.topics.notFound(name);
    return configured && discovered ? "config+discovered" : configured ? "config" : "discovered";
  }

  async list(): Promise<DlqSummary[]> {
    const topics = await this.topics.listTopicNames();
    const existing = new Set(topics);
    const discovered = new Set(
      this.config.discover
        ? [...matchDeadLetterTopics(topics, this.config.dltPatterns), ...(await this.shareGroupDlqNames(topics))]
        : [],
    );
    const configured = new Set(this.config.dlqs.map((d) => d.name));
    const names = [...new Set([...configured, ...discovered])].sort();
    const present = names.filter((n) => existing.has(n));
    const configs = await this.topics.topicConfigs(present).catch(() => new Map<string, TopicConfig>());
    const out: DlqSummary[] = [];
    for (const name of names) {
      const source =
        configured.has(name) && discovered.has(name)
          ? "config+discovered"
          : configured.has(name)
            ? "config"
            : "discovered";
      if (!existing.has(name)) {
        out.push({
          connectionId: this.connectionId,
          name,
          kind: "kafka",
          queueType: "topic",
          depth: null,
          inFlight: null,
          consumers: null,
          origins: this.topics.configEntry(name)?.origin ? [this.topics.configEntry(name)!.origin!] : [],
          source,
          readRisk: null,
          warnings: [
            {
              code: "missing",
              label: "does not exist",
              message: `Topic "${name}" is named in the config but does not exist on the broker.`,
            },
          ],
          facts: [],
        });
        continue;
      }
      try {
        out.push(await this.summarize(name, configs.get(name), source));
      } catch (e) {
        if (e instanceof BrokerError && e.kind === "not_found") continue; // deleted while listing
        throw e;
      }
    }
    return out;
  }

  async describe(name: string): Promise<DlqSummary> {
    const source = await this.known(name);
    const configs = await this.topics.topicConfigs([name]).catch(() => new Map<string, TopicConfig>());
    return this.summarize(name, configs.get(name), source);
  }

  private async summarize(
    name: string,
    config: TopicConfig | undefined,
    source: DlqSummary["source"],
  ): Promise<DlqSummary> {
    const state = await this.topics.topicState(name);
    const warnings: DlqWarning[] = [];
    const facts: HeaderEntry[] = [{ name: "partitions", value: numberValue(state.partitions.length) }];
    let handled = new Map<number, number>();
    let firstUnhandled = new Map<number, bigint>(state.partitions.map((p) => [p.partition, p.start]));
    if (this.store) {
      try {
        const key = await this.topics.topicKey(name);
        [handled, firstUnhandled] = await Promise.all([
          this.store.handledCounts(this.connectionId, key, state.partitions),
          this.store.firstUnhandled(this.connectionId, key, state.partitions),
        ]);
      } catch (e) {
        warnings.push({
          code: "handled_unavailable",
          label: "handled offsets unknown",
          message:
            "The console's record of handled offsets could not be read: letters already redriven or discarded are not marked.",
        });
        console.warn(`[kafka] handled offsets for ${name}: ${(e as Error).message}`);
      }
    }
    const partitions: PartitionSummary[] = [];
    const named = new Set<string>();
    let oldest: { at: number; partition: number; offset: bigint } | null = null;
    await Promise.all(
      state.partitions.map(async (p) => {
        const first = firstUnhandled.get(p.partition) ?? p.start;
        let at: number | null = null;
        if (first < p.end) {
          const r = await this.topics.recordAt(name, p.partition, first).catch(() => null);
          if (r && Number(r.timestamp) >= 0) at = Number(r.timestamp);
          // The origin its letters name (Spring, Connect, Streams, share headers): read anyway for the age.
          const origin = r ? originOf(decodeKafkajsHeaders(r.headers)).topic : null;
          if (origin && origin !== name) named.add(origin);
        }
        if (at !== null && (!oldest || at < oldest.at)) oldest = { at, partition: p.partition, offset: first };
        partitions.push({
          partition: p.partition,
          start: p.start.toString(),
          end: p.end.toString(),
          letters: Number(p.end - p.start),
          handled: handled.get(p.partition) ?? 0,
          oldestUnhandledAt: at === null ? null : new Date(at).toISOString(),
        });
      }),
    );
    partitions.sort((a, b) => a.partition - b.partition);
    const handledTotal = partitions.reduce((n, p) => n + p.handled, 0);
    facts.push({ name: "handled by the console", value: numberValue(handledTotal) });
    facts.push({ name: "unhandled", value: numberValue(state.total - handledTotal) });
    const o = oldest as { at: number; partition: number; offset: bigint } | null;
    if (o) {
      facts.push({ name: "oldest unhandled letter", value: timestampValue(o.at) });
      facts.push({ name: "oldest unhandled age", value: { t: "string", v: formatDuration(Date.now() - o.at) } });
    }
    if (config) {
      if (config.cleanupPolicy) facts.push({ name: "cleanup.policy", value: { t: "string", v: config.cleanupPolicy } });
      if (config.retentionMs !== null)
        facts.push({
          name: "retention.ms",
          value: {
            t: "string",
            v: config.retentionMs < 0 ? "unlimited" : `${config.retentionMs} (${formatDuration(config.retentionMs)})`,
          },
        });
      if (config.retentionBytes !== null)
        facts.push({
          name: "retention.bytes",
          value: { t: "string", v: config.retentionBytes < 0 ? "unlimited" : String(config.retentionBytes) },
        });
      if (config.maxMessageBytes !== null)
        facts.push({ name: "max.message.bytes", value: numberValue(config.maxMessageBytes) });
      warnings.push(...retentionWarnings(config, o, Date.now(), this.warnShare));
    }
    const entry = this.topics.configEntry(name);
    return {
      connectionId: this.connectionId,
      name,
      kind: "kafka",
      queueType: "topic",
      depth: state.total,
      inFlight: null,
      consumers: null,
      // The configured origin, else those its oldest unhandled letters name (config-checks.ts's originsOf).
      origins: entry?.origin ? [entry.origin] : [...named].sort(),
      source,
      readRisk: null,
      warnings,
      facts,
      partitions,
    };
  }
}
