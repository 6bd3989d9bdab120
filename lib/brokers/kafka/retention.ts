/** Retention facts and warnings for a dead-letter topic. Pure. */
import type { DlqWarning } from "@/lib/brokers/contract/letter";

export interface TopicConfig {
  retentionMs: number | null;
  retentionBytes: number | null;
  cleanupPolicy: string | null;
  maxMessageBytes: number | null;
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} h`;
  return `${Math.round(h / 24)} days`;
}

/**
 * `oldest`: the oldest letter the console has not handled. Kafka deletes whole segments once their
 * newest record is older than retention.ms, so the letter may live a little longer, never less.
 */
export function retentionWarnings(
  config: TopicConfig,
  oldest: { at: number; partition: number; offset: bigint } | null,
  now: number,
  share: number,
): DlqWarning[] {
  const out: DlqWarning[] = [];
  const policies = (config.cleanupPolicy ?? "delete").split(",").map((s) => s.trim());
  if (policies.includes("compact")) {
    out.push({
      code: "compacted",
      label: "compacted topic",
      message: `This dead-letter topic is compacted (cleanup.policy=${config.cleanupPolicy}): a newer letter with the same key replaces an older one, so letters can disappear before anyone looks at them, and offsets have gaps. Dead-letter topics should use cleanup.policy=delete.`,
    });
  }
  if (policies.includes("delete") && oldest && config.retentionMs !== null && config.retentionMs > 0) {
    const age = now - oldest.at;
    if (age >= config.retentionMs * share) {
      const left = config.retentionMs - age;
      out.push({
        code: "near_retention",
        label: "letters near retention",
        message:
          left > 0
            ? `The oldest unhandled letter (partition ${oldest.partition}, offset ${oldest.offset}) is ${formatDuration(age)} old and the topic keeps letters for ${formatDuration(config.retentionMs)}: Kafka may delete it in about ${formatDuration(left)}. Handle it or raise retention.ms.`
            : `The oldest unhandled letter (partition ${oldest.partition}, offset ${oldest.offset}) is ${formatDuration(age)} old, past the topic's retention of ${formatDuration(config.retentionMs)}: Kafka can delete it at any moment. Handle it or raise retention.ms now.`,
      });
    }
  }
  return out;
}
