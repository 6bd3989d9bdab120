/** Queue attributes → the facts, warnings and read risk of an SQS DLQ. Pure. */
import type { DlqSummary, ReadRisk } from "@/lib/brokers/contract/dlq";
import type { DlqWarning, HeaderEntry } from "@/lib/brokers/contract/letter";
import { timestampValue } from "@/lib/brokers/display";
import { queueNameOfArn } from "@/lib/brokers/sqs/letter";

/** SQS's default MessageRetentionPeriod, used when a server does not report it. */
export const DEFAULT_RETENTION_SECONDS = 345_600;

export type Attrs = Record<string, string | undefined>;

export interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number | null;
}

export function parseRedrivePolicy(text: string | undefined): RedrivePolicy | null {
  if (!text) return null;
  try {
    const p = JSON.parse(text) as { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown };
    if (typeof p.deadLetterTargetArn !== "string" || !p.deadLetterTargetArn) return null;
    const n = Number(p.maxReceiveCount);
    return { deadLetterTargetArn: p.deadLetterTargetArn, maxReceiveCount: Number.isFinite(n) && n > 0 ? n : null };
  } catch {
    return null;
  }
}

export function humanSeconds(s: number): string {
  if (s % 86_400 === 0) return `${s / 86_400} day${s === 86_400 ? "" : "s"}`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

const num = (v: string | undefined): number | null => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);

export function retentionOf(a: Attrs): { seconds: number; reported: boolean } {
  const n = num(a.MessageRetentionPeriod);
  return n === null ? { seconds: DEFAULT_RETENTION_SECONDS, reported: false } : { seconds: n, reported: true };
}

export interface SourceInfo {
  name: string;
  attrs: Attrs | null;
}

export interface SummaryInput {
  connectionId: string;
  name: string;
  attrs: Attrs;
  sources: SourceInfo[];
  /** More source queues exist than were described. */
  sourcesTruncated: boolean;
  configOrigin: string | null;
  source: DlqSummary["source"];
  readVisibilitySeconds: number;
  nativeBulkMove: boolean;
  /** Oldest SentTimestamp (ms) seen by a read that covered the whole queue, and when it was seen. */
  oldestSeen: { sentMs: number; atMs: number } | null;
  now: number;
  /** Set when this queue is the safe copy of a DLQ made by the console's move to safety (safe-move.ts): that DLQ and its origins. */
  safeCopyOf?: { dlq: string; origins: string[] } | null;
}

const str = (v: string): HeaderEntry["value"] => ({ t: "string", v });

export function chainedRisk(name: string, attrs: Attrs): ReadRisk | null {
  const own = parseRedrivePolicy(attrs.RedrivePolicy);
  if (!own) return null;
  const next = queueNameOfArn(own.deadLetterTargetArn) ?? own.deadLetterTargetArn;
  const limit = own.maxReceiveCount ?? undefined;
  return {
    kind: "chained-dlq",
    limit,
    onwardQueue: next,
    // letter.ts keeps ApproximateReceiveCount as FailureInfo.count.
    countField: "count",
    // The read saw the count after its own receive; the next receive is the one past the limit.
    ...(limit !== undefined ? { nextReadLosesAt: limit } : {}),
    message:
      `"${name}" has a redrive policy of its own: a letter received more than ${limit ?? "maxReceiveCount"} times is moved on to "${next}" by SQS and leaves this DLQ. ` +
      `Every read by the console is a receive and raises the letters' ApproximateReceiveCount, which may already be high from the source queue. ` +
      `Read only if you accept that letters may move to "${next}"; the confirmation is recorded.`,
  };
}

/** Letters of one FIFO message group a receive hands out while none of them is deleted (one call's worth). */
const FIFO_READ_PER_GROUP = 10;

export function buildSummary(i: SummaryInput): DlqSummary {
  const a = i.attrs;
  const fifo = a.FifoQueue === "true" || i.name.endsWith(".fifo");
  const retention = retentionOf(a);
  const facts: HeaderEntry[] = [];
  const warnings: DlqWarning[] = [];
  if (a.QueueArn) facts.push({ name: "ARN", value: str(a.QueueArn) });
  facts.push({ name: "queue type", value: str(fifo ? "FIFO" : "standard") });
  facts.push({
    name: "retention (MessageRetentionPeriod)",
    value: str(
      retention.reported
        ? `${humanSeconds(retention.seconds)} (${retention.seconds} s)`
        : `not reported by this server (the SQS default is ${humanSeconds(DEFAULT_RETENTION_SECONDS)})`,
    ),
  });
  const delayed = num(a.ApproximateNumberOfMessagesDelayed);
  if (delayed !== null)
    facts.push({ name: "delayed (ApproximateNumberOfMessagesDelayed)", value: { t: "number", v: String(delayed) } });
  if (i.oldestSeen) {
    facts.push({
      name: "oldest letter sent (SentTimestamp, seen by the last full read)",
      value: timestampValue(i.oldestSeen.sentMs),
    });
    facts.push({
      name: "age of the oldest letter",
      value: str(
        `${humanSeconds(Math.max(0, Math.round((i.now - i.oldestSeen.sentMs) / 1000)))} (as of ${new Date(i.oldestSeen.atMs).toISOString()})`,
      ),
    });
    if (!fifo && retention.reported)
      facts.push({
        name: "oldest letter expires (SentTimestamp + retention)",
        value: timestampValue(i.oldestSeen.sentMs + retention.seconds * 1000),
      });
  } else {
    facts.push({
      name: "age of the oldest letter",
      value: str(
        "not known until a read covers the whole queue (the SQS API does not report it; CloudWatch's ApproximateAgeOfOldestMessage does)",
      ),
    });
  }
  facts.push({
    name: "console reads hide letters for (VisibilityTimeout)",
    value: str(`${i.readVisibilitySeconds} s, then release them at once`),
  });
  facts.push({
    name: "native move (StartMessageMoveTask)",
    value: str(i.nativeBulkMove ? "supported" : "not supported by this server"),
  });
  const own = parseRedrivePolicy(a.RedrivePolicy);
  if (own)
    facts.push({
      name: "redrive policy of this DLQ",
      value: str(
        `to ${queueNameOfArn(own.deadLetterTargetArn) ?? own.deadLetterTargetArn} after ${own.maxReceiveCount ?? "?"} receives`,
      ),
    });
  if (a.RedriveAllowPolicy) facts.push({ name: "redrive allow policy", value: str(a.RedriveAllowPolicy) });
  if (i.safeCopyOf)
    facts.push({
      name: "safe copy",
      value: str(`safe copy of ${i.safeCopyOf.dlq}, made by the console's move to safety`),
    });

  const sourceRows: Array<[string, HeaderEntry["value"]]> = [];
  for (const s of i.sources) {
    if (!s.attrs) {
      sourceRows.push([s.name, str("attributes not readable")]);
      continue;
    }
    const p = parseRedrivePolicy(s.attrs.RedrivePolicy);
    const r = retentionOf(s.attrs);
    sourceRows.push([
      s.name,
      str(
        `maxReceiveCount ${p?.maxReceiveCount ?? "?"}, retention ${r.reported ? `${humanSeconds(r.seconds)} (${r.seconds} s)` : "not reported"}`,
      ),
    ]);
    // Only reported retentions are compared: a server that omits them (ElasticMQ) gets no guessed warning.
    if (r.reported && retention.reported && r.seconds > retention.seconds) {
      warnings.push({
        code: "retention_shorter_than_source",
        label: "retention shorter than source",
        message: fifo
          ? `This DLQ keeps letters for ${humanSeconds(retention.seconds)}, less than its source "${s.name}" (${humanSeconds(r.seconds)}). Give the DLQ at least the source's retention.`
          : `This DLQ keeps letters for ${humanSeconds(retention.seconds)}, less than its source "${s.name}" (${humanSeconds(r.seconds)}). SQS keeps a standard message's original enqueue time when it moves it to the DLQ, so letters that spent time in "${s.name}" expire here early, some possibly at once. Give the DLQ a longer retention than every source.`,
      });
    }
  }
  if (sourceRows.length)
    facts.push({ name: "source queues (redrive policies naming this DLQ)", value: { t: "table", v: sourceRows } });
  if (i.sourcesTruncated)
    warnings.push({
      code: "many_sources",
      label: "many sources",
      message: "Many queues name this DLQ in their redrive policy; only the first ones are described.",
    });
  if (i.sources.length === 0 && !i.safeCopyOf) {
    warnings.push({
      code: "no_source",
      label: "no source queue",
      message: `No queue's redrive policy names this queue${i.configOrigin ? ` (the config says its letters come from "${i.configOrigin}")` : ""}: SQS will not move failed messages here by itself.`,
    });
  }
  const depth = num(a.ApproximateNumberOfMessages);
  if (fifo && depth !== null && depth > FIFO_READ_PER_GROUP) {
    warnings.push({
      code: "fifo_group_read_limit",
      label: "FIFO: 10 per group readable",
      message: `SQS hands out the later letters of a FIFO message group only after the earlier ones are deleted, so a read that removes nothing sees at most the first ${FIFO_READ_PER_GROUP} letters of each group. Pages and scans of this DLQ miss the rest of any group that holds more (a scan says so and marks nothing gone); a redrive reaches them as it removes the earlier ones.`,
    });
  }
  const origins = new Set(i.sources.map((s) => s.name));
  if (i.configOrigin) origins.add(i.configOrigin);
  for (const o of i.safeCopyOf?.origins ?? []) origins.add(o);
  return {
    connectionId: i.connectionId,
    name: i.name,
    kind: "sqs",
    queueType: fifo ? "fifo" : "standard",
    depth,
    inFlight: num(a.ApproximateNumberOfMessagesNotVisible),
    consumers: null,
    origins: [...origins].sort(),
    source: i.source,
    readRisk: chainedRisk(i.name, a),
    warnings,
    facts,
  };
}
