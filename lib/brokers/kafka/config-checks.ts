/** Configuration checks of dead-letter topics (the sampler's findings). Pure: inputs are the broker's answers. */
import type { ConfigFinding, FindingSeverity } from "@/lib/brokers/contract/inspection";
import { topicGlob } from "@/lib/brokers/kafka/discovery";
import type { TopicConfig } from "@/lib/brokers/kafka/retention";

export const DAY_MS = 86_400_000;

/** The topic configs the checks and vitals read, asked in one DescribeConfigs. */
export const CHECKED_CONFIGS = ["retention.ms", "retention.bytes", "cleanup.policy", "max.message.bytes"];

/** One resource of a DescribeConfigs answer (kafkajs's decoded shape). */
export interface DescribedResource {
  resourceName: string;
  configEntries: Array<{ configName: string; configValue: string | null }>;
}

export function topicConfigOf(resource: DescribedResource): TopicConfig {
  const get = (k: string) => resource.configEntries.find((c) => c.configName === k)?.configValue ?? null;
  const num = (k: string) => {
    const v = get(k);
    return v === null || v === "" || !Number.isFinite(Number(v)) ? null : Number(v);
  };
  return {
    retentionMs: num("retention.ms"),
    retentionBytes: num("retention.bytes"),
    cleanupPolicy: get("cleanup.policy"),
    maxMessageBytes: num("max.message.bytes"),
  };
}

export function cleanupPolicies(config: TopicConfig): string[] {
  return (config.cleanupPolicy ?? "delete")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * How long Kafka keeps a letter before deleting it by time; null when it never does: retention.ms
 * is -1, or the topic is compact-only (retention.ms then deletes nothing; compaction is its own finding).
 */
export function timeRetentionMs(config: TopicConfig): number | null {
  if (!cleanupPolicies(config).includes("delete")) return null;
  return config.retentionMs === null || config.retentionMs < 0 ? null : config.retentionMs;
}

/** An exact duration in words: "7 days", "1 day 12 hours", "90 seconds", "1500 ms". */
export function durationWords(ms: number): string {
  const units: Array<[number, string]> = [
    [DAY_MS, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
    [1000, "second"],
  ];
  if (ms % 1000 !== 0 && ms < 60_000) return `${ms} ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [size, word] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n} ${word}${n === 1 ? "" : "s"}`);
    rest -= n * size;
  }
  if (rest > 0) parts.push(`${rest} ms`);
  return parts.length ? parts.join(" ") : "0 ms";
}

/**
 * The topics a dead-letter topic's letters come from, as far as they can be known without asking
 * anyone: the origin configured for it; else the origins its letters name in their headers (Spring
 * `kafka_dlt-original-topic`, Connect `__connect.errors.topic`, read from the records at the log
 * start); else its name, when a DLT pattern marks dead-letter topics by an affix (`*.DLT`, `dlq.*`)
 * and the name without it is a topic that exists. Only topics that exist, never the DLT itself.
 */
export function originsOf(
  dlt: string,
  input: { configured?: string; fromHeaders: string[]; patterns: string[]; exists: (topic: string) => boolean },
): string[] {
  if (input.configured) return input.configured !== dlt && input.exists(input.configured) ? [input.configured] : [];
  const named = [...new Set(input.fromHeaders)].filter((t) => t !== dlt && input.exists(t)).sort();
  if (named.length) return named;
  for (const p of input.patterns) {
    // Only affix patterns: in `team-*.DLT` the literal part is not only the dead-letter mark.
    const star = p.indexOf("*");
    if (star < 0 || p.indexOf("*", star + 1) >= 0 || p.includes("?") || (star !== 0 && star !== p.length - 1)) continue;
    const m = topicGlob(p).test(dlt)
      ? star === 0
        ? dlt.slice(0, dlt.length - (p.length - 1))
        : dlt.slice(p.length - 1)
      : "";
    if (m && m !== dlt && input.exists(m)) return [m];
  }
  return [];
}

/** What the checks need to know of one dead-letter topic that exists. */
export interface DltFacts {
  name: string;
  partitions: number;
  /** Null when its configs could not be read. */
  config: TopicConfig | null;
  /** The DLQ entry says its letters' order matters (`ordered: true`). */
  ordered: boolean;
  /** Where its letters come from (see `originsOf`), with their partition counts and configs. */
  origins: Array<{ name: string; partitions: number; config: TopicConfig | null }>;
}

export interface CheckOptions {
  /** Below this, retention.ms is a finding (operations.kafkaMinRetentionDays). */
  minRetentionMs: number;
  /** The brokers, for the `kafka-configs.sh` / `kafka-topics.sh` lines in `fix`. */
  bootstrap: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function kafkaFindings(dlts: DltFacts[], opts: CheckOptions): ConfigFinding[] {
  const out: ConfigFinding[] = [];
  for (const d of dlts) {
    const object = `topic ${d.name}`;
    const configsCmd = `kafka-configs.sh --bootstrap-server ${opts.bootstrap} --alter --entity-type topics --entity-name ${d.name}`;
    const finding = (code: string, severity: FindingSeverity, why: string, fix: string): ConfigFinding => ({
      code: `kafka.${code}`,
      severity,
      object,
      dlq: d.name,
      why,
      fix,
    });

    if (d.config) {
      const policies = cleanupPolicies(d.config);
      if (policies.includes("compact")) {
        out.push(
          finding(
            "compacted",
            "critical",
            `Dead-letter topic ${d.name} is compacted (cleanup.policy=${d.config.cleanupPolicy}): Kafka keeps only the newest record of each key, so when two letters share a key the log cleaner deletes the older one, whether or not anyone handled it. A compacted topic also refuses records without a key, so those letters cannot be dead-lettered at all.`,
            `Set cleanup.policy=delete on the topic: ${configsCmd} --add-config cleanup.policy=delete (letters already compacted away cannot be recovered).`,
          ),
        );
      }
      const retention = timeRetentionMs(d.config);
      if (retention !== null && retention < opts.minRetentionMs) {
        const critical = retention < DAY_MS;
        out.push(
          finding(
            "retention_short",
            critical ? "critical" : "warning",
            `Dead-letter topic ${d.name} keeps letters for ${durationWords(retention)} (retention.ms=${retention}); the console expects at least ${durationWords(opts.minRetentionMs)} (operations.kafkaMinRetentionDays). Kafka deletes letters older than that whether or not anyone handled them${critical ? ": a letter that arrives at the end of a working day is gone before the next one starts" : ": a letter that arrives before a long weekend or a holiday can be gone before anyone looks"}.`,
            `Raise retention.ms to at least ${opts.minRetentionMs} (${durationWords(opts.minRetentionMs)}): ${configsCmd} --add-config retention.ms=${opts.minRetentionMs}`,
          ),
        );
      }
      const longer =
        retention === null
          ? []
          : d.origins.filter(
              (o) =>
                o.config &&
                cleanupPolicies(o.config).includes("delete") &&
                (timeRetentionMs(o.config) ?? Infinity) > retention,
            );
      if (retention !== null && longer.length) {
        const o = longer[0];
        const theirs = timeRetentionMs(o.config!);
        const target = theirs === null ? -1 : theirs;
        out.push(
          finding(
            "retention_below_origin",
            "warning",
            `Dead-letter topic ${d.name} keeps letters for ${durationWords(retention)}, less than its origin ${o.name} keeps records (${theirs === null ? "without limit, retention.ms=-1" : `${durationWords(theirs)}, retention.ms=${theirs}`}). A failed record that keeps its original timestamp (Kafka Connect's dead-letter reporter keeps it; so does any producer that copies it) starts the DLT's retention clock when it was first produced, so a record that failed late can be deleted from the DLT soon after it arrived; and operators get less time to handle a letter than the origin gives its consumers.`,
            `Make the dead-letter topic keep letters at least as long as its origin: ${configsCmd} --add-config retention.ms=${target}`,
          ),
        );
      }
    }

    const wider = d.origins.filter((o) => o.partitions > d.partitions).sort((a, b) => b.partitions - a.partitions);
    if (wider.length) {
      const o = wider[0];
      out.push(
        finding(
          "fewer_partitions",
          d.ordered ? "warning" : "info",
          `Dead-letter topic ${d.name} has ${plural(d.partitions, "partition")}, its origin ${o.name} has ${o.partitions}. Records of one key keep their order only within one partition. Spring Kafka's default dead-letter resolver sends each failed record to the partition with the same number as in the origin: for records from partition ${d.partitions} and above, which the DLT lacks, Spring Kafka 2.7 and later let the producer pick another partition (logging "Destination resolver returned non-existent partition"), older versions fail to publish the letter at all. Letters from several origin partitions then share a DLT partition, and the DLT no longer mirrors the origin's partitioning.${d.ordered ? " This DLQ is configured with ordered: true: its letters' order matters when they are redriven." : ""}`,
          `Give the dead-letter topic at least as many partitions as its origin: kafka-topics.sh --bootstrap-server ${opts.bootstrap} --alter --topic ${d.name} --partitions ${o.partitions} (partitions can only be added; letters already in the DLT stay where they are).`,
        ),
      );
    }
  }
  return out;
}
