/**
 * What one look at an SQS connection saw (every queue's GetQueueAttributes "All") → its DLQs, their
 * vitals and the configuration faults that lose or risk letters. Pure: inspect.ts makes the calls.
 */
import type { ConfigFinding, DlqVitals } from "@/lib/brokers/contract/inspection";
import {
  humanSeconds,
  parseRedrivePolicy,
  retentionOf,
  type Attrs,
  type RedrivePolicy,
} from "@/lib/brokers/sqs/summary";
import { queueNameOfArn } from "@/lib/brokers/sqs/letter";
import { dlqTargetsOf } from "@/lib/brokers/sqs/discovery";
import { dlqOfSafeQueueName } from "@/lib/brokers/sqs/safe-move";

/** SQS's longest MessageRetentionPeriod (14 days). */
export const MAX_RETENTION_SECONDS = 1_209_600;

/** The maxReceiveCount a fix proposes: a few retries before a message is set aside. */
const SUGGESTED_MAX_RECEIVE_COUNT = 5;

export interface ConnectionScope {
  /** DLQ names in the connection's config. */
  configured: string[];
  discover: boolean;
  queueNamePrefix?: string;
}

export interface SeenQueue {
  url: string;
  attrs: Attrs;
}

export interface Seen {
  /** Queues ListQueues gave (with the connection's prefix) and whose attributes were read. */
  listed: Map<string, SeenQueue>;
  /** Queues looked up by name (`lookupsNeeded`); null: the queue does not exist. */
  lookedUp: Map<string, SeenQueue | null>;
}

interface Arn {
  region: string;
  account: string;
  name: string;
}

function parseArn(arn: string | undefined): Arn | null {
  const m = arn ? /^arn:[^:]+:sqs:([^:]*):([^:]*):(.+)$/.exec(arn) : null;
  return m ? { region: m[1], account: m[2], name: m[3] } : null;
}

/** A redrive target in the source's own account and region: the only ones a lookup by name can prove missing. */
function localTarget(source: Attrs, policy: RedrivePolicy): string | null {
  const s = parseArn(source.QueueArn);
  const t = parseArn(policy.deadLetterTargetArn);
  return s && t && s.region === t.region && s.account === t.account ? t.name : null;
}

const inScope = (scope: ConnectionScope, name: string) =>
  !scope.queueNamePrefix || name.startsWith(scope.queueNamePrefix);

/** A policy the checks look at: every one when the connection discovers DLQs, else those naming a configured DLQ. */
const watched = (scope: ConnectionScope, target: string) => scope.discover || scope.configured.includes(target);

function policiesOf(listed: Seen["listed"]) {
  const out: Array<{ source: string; q: SeenQueue; policy: RedrivePolicy; target: string }> = [];
  for (const [source, q] of listed) {
    const policy = parseRedrivePolicy(q.attrs.RedrivePolicy);
    const target = policy && queueNameOfArn(policy.deadLetterTargetArn);
    if (policy && target) out.push({ source, q, policy, target });
  }
  return out;
}

/**
 * Queues to look up by name after the listing: configured DLQs it did not give (outside the prefix,
 * or missing), and redrive targets in the same account and region that it did not give (outside the
 * prefix, or missing: the lookup proves which).
 */
export function lookupsNeeded(scope: ConnectionScope, listed: Seen["listed"]): string[] {
  const names = new Set(scope.configured.filter((n) => !listed.has(n)));
  if (scope.discover) {
    for (const p of policiesOf(listed)) {
      const t = localTarget(p.q.attrs, p.policy);
      if (t && !listed.has(t)) names.add(t);
    }
  }
  return [...names].sort();
}

function seenQueue(seen: Seen, name: string): SeenQueue | null {
  return seen.listed.get(name) ?? seen.lookedUp.get(name) ?? null;
}

/**
 * The DLQs `listDlqs` gives, by the same rules (adapter.ts `listDlqs` and `describe`): configured
 * ones (even when missing), queues named by a redrive policy of a listed queue that exist and start
 * with the prefix, and the safe copies (`<dlq>-safe`, safe-move.ts) of those that exist.
 */
export function dlqNamesOf(scope: ConnectionScope, seen: Seen): string[] {
  const discovered = scope.discover
    ? dlqTargetsOf([...seen.listed].map(([source, q]) => ({ source, policy: q.attrs.RedrivePolicy })))
    : new Map<string, string[]>();
  const exists = (n: string) => seenQueue(seen, n) !== null;
  const counted = (n: string): boolean => {
    if (scope.configured.includes(n)) return true;
    if (discovered.has(n) && inScope(scope, n) && exists(n)) return true;
    const dlq = dlqOfSafeQueueName(n);
    return dlq !== null && exists(n) && exists(dlq) && counted(dlq);
  };
  const candidates = new Set([...scope.configured, ...discovered.keys()]);
  if (scope.discover) {
    for (const n of seen.listed.keys()) {
      const dlq = dlqOfSafeQueueName(n);
      if (dlq && (discovered.has(dlq) || scope.configured.includes(dlq))) candidates.add(n);
    }
  }
  return [...candidates].filter(counted).sort();
}

const isFifo = (name: string, attrs: Attrs | null) => attrs?.FifoQueue === "true" || name.endsWith(".fifo");

const count = (v: string | undefined): number | null => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);

/**
 * Depth counts every letter the DLQ holds: visible, in flight (received and not deleted: held by a
 * console read or a consumer, and back when released) and delayed (sent with a delay, e.g. undone
 * into a DLQ that has DelaySeconds). The sampler takes inflow from depth increases on SQS, so a depth
 * without in-flight letters would fall during every read and rise again after it, as false inflow.
 */
export function vitalsOf(name: string, attrs: Attrs | null): DlqVitals {
  const fifo = isFifo(name, attrs);
  // A standard queue keeps a message's first SentTimestamp across the move to the DLQ; FIFO starts anew.
  const retentionClock = fifo ? "arrival" : "enqueue";
  if (!attrs)
    return {
      name,
      queueType: "unknown",
      depth: null,
      inFlight: null,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock,
    };
  const visible = count(attrs.ApproximateNumberOfMessages);
  const retention = retentionOf(attrs);
  return {
    name,
    queueType: fifo ? "fifo" : "standard",
    depth:
      visible === null
        ? null
        : visible +
          (count(attrs.ApproximateNumberOfMessagesNotVisible) ?? 0) +
          (count(attrs.ApproximateNumberOfMessagesDelayed) ?? 0),
    inFlight: visible === null ? null : (count(attrs.ApproximateNumberOfMessagesNotVisible) ?? 0),
    // SQS keeps no count of messages ever received outside CloudWatch (NumberOfMessagesSent).
    enteredTotal: null,
    // No attribute gives the oldest message's age without a receive (CloudWatch's ApproximateAgeOfOldestMessage does).
    oldestAt: null,
    // A server that does not report MessageRetentionPeriod (ElasticMQ) does not expire messages either.
    retentionMs: retention.reported ? retention.seconds * 1000 : null,
    retentionClock,
  };
}

const words = (s: number) => `${humanSeconds(s)} (${s} s)`;

/** `--attributes` of set-queue-attributes setting a redrive policy, as a shell argument. */
function policyArgument(targetArn: string, maxReceiveCount: number): string {
  const policy = JSON.stringify({ deadLetterTargetArn: targetArn, maxReceiveCount: String(maxReceiveCount) });
  return `'${JSON.stringify({ RedrivePolicy: policy })}'`;
}

function retentionFindings(dlqs: string[], seen: Seen): ConfigFinding[] {
  const out: ConfigFinding[] = [];
  const policies = policiesOf(seen.listed);
  for (const dlq of dlqs) {
    const q = seenQueue(seen, dlq);
    if (!q || isFifo(dlq, q.attrs)) continue;
    const own = retentionOf(q.attrs);
    // Only reported retentions are compared: nothing is guessed for a server that omits them.
    if (!own.reported) continue;
    const longer = policies
      .filter((p) => (q.attrs.QueueArn ? p.policy.deadLetterTargetArn === q.attrs.QueueArn : p.target === dlq))
      .map((p) => ({ source: p.source, r: retentionOf(p.q.attrs) }))
      .filter((s) => s.r.reported && s.r.seconds >= own.seconds)
      .sort((a, b) => b.r.seconds - a.r.seconds || a.source.localeCompare(b.source));
    if (longer.length === 0) continue;
    const worst = longer[0];
    const others =
      longer.length > 1
        ? ` (and ${longer.length - 1} more source${longer.length > 2 ? "s" : ""}: ${longer
            .slice(1)
            .map((s) => `"${s.source}"`)
            .join(", ")})`
        : "";
    const fix =
      worst.r.seconds < MAX_RETENTION_SECONDS
        ? `Give "${dlq}" a longer retention than every source, e.g. the SQS maximum of 14 days: aws sqs set-queue-attributes --queue-url ${q.url} --attributes MessageRetentionPeriod=${MAX_RETENTION_SECONDS}.`
        : `"${worst.source}" keeps messages for the SQS maximum of 14 days, so no DLQ can keep them longer: set "${dlq}" to 14 days (aws sqs set-queue-attributes --queue-url ${q.url} --attributes MessageRetentionPeriod=${MAX_RETENTION_SECONDS}) and lower the MessageRetentionPeriod of "${worst.source}" well below it.`;
    out.push({
      code: "sqs.retention_not_longer_than_source",
      severity: "critical",
      object: `queue ${dlq}`,
      dlq,
      why:
        `"${dlq}" keeps letters for ${words(own.seconds)}, no longer than its source "${worst.source}" keeps messages (${words(worst.r.seconds)})${others}. ` +
        `SQS keeps a standard message's original enqueue time when it moves it to the DLQ, and retention counts from that time: a letter that spent a while in "${worst.source}" has that much less time in "${dlq}", ` +
        `and one that failed after ${humanSeconds(own.seconds)} or more there is deleted from "${dlq}" at once, before anyone sees it.`,
      fix,
    });
  }
  return out;
}

function chainedFindings(dlqs: string[], seen: Seen): ConfigFinding[] {
  const out: ConfigFinding[] = [];
  for (const dlq of dlqs) {
    const q = seenQueue(seen, dlq);
    const own = q && parseRedrivePolicy(q.attrs.RedrivePolicy);
    if (!q || !own) continue;
    const next = queueNameOfArn(own.deadLetterTargetArn) ?? own.deadLetterTargetArn;
    const limit = own.maxReceiveCount ?? "maxReceiveCount";
    out.push({
      code: "sqs.dlq_has_redrive_policy",
      severity: "warning",
      object: `queue ${dlq}`,
      dlq,
      why:
        `The DLQ "${dlq}" has a redrive policy of its own: SQS moves a letter on to "${next}" once it has been received more than ${limit} times from "${dlq}". ` +
        `Every receive counts, the console's reads included, and a letter's ApproximateReceiveCount may already be high from its source, so reading or consuming this DLQ moves letters out of it.`,
      fix:
        `Remove the DLQ's redrive policy: aws sqs set-queue-attributes --queue-url ${q.url} --attributes RedrivePolicy="". ` +
        `If letters should end up in "${next}", move them there on purpose (the console's redrive, or a message move task) instead of letting reads move them.`,
    });
  }
  return out;
}

function policyFindings(scope: ConnectionScope, dlqs: string[], seen: Seen): ConfigFinding[] {
  const out: ConfigFinding[] = [];
  const inSet = (n: string) => (dlqs.includes(n) ? n : null);
  for (const p of policiesOf(seen.listed)) {
    if (!watched(scope, p.target)) continue;
    const local = localTarget(p.q.attrs, p.policy);
    const missing =
      local !== null && !seen.listed.has(local) && seen.lookedUp.has(local) && seen.lookedUp.get(local) === null;
    const n = p.policy.maxReceiveCount;
    if (missing) {
      out.push({
        code: "sqs.redrive_target_missing",
        severity: "critical",
        object: `queue ${p.source}`,
        dlq: inSet(p.target),
        why:
          `The redrive policy of "${p.source}" names the DLQ "${p.target}" (${p.policy.deadLetterTargetArn}), which does not exist. ` +
          `A message received ${n ?? "maxReceiveCount"} times in "${p.source}" has no DLQ to go to: it is not dead-lettered anywhere anyone can see, and is lost.`,
        fix:
          `Create the DLQ with a longer retention than "${p.source}" (aws sqs create-queue --queue-name ${p.target} --attributes MessageRetentionPeriod=${MAX_RETENTION_SECONDS}), ` +
          `or point the policy at an existing DLQ: aws sqs set-queue-attributes --queue-url ${p.q.url} --attributes ${policyArgument("<ARN of the DLQ>", n ?? SUGGESTED_MAX_RECEIVE_COUNT)}.`,
      });
    }
    if (n === 1) {
      out.push({
        code: "sqs.max_receive_count_one",
        severity: "warning",
        object: `queue ${p.source}`,
        dlq: inSet(p.target),
        why:
          `"${p.source}" dead-letters a message after a single receive (maxReceiveCount 1): one failed attempt, such as a consumer crash, a timeout, ` +
          `or a visibility timeout that runs out during slow processing, moves it to "${p.target}" without a retry.`,
        fix: `Allow a few receives before a message is set aside: aws sqs set-queue-attributes --queue-url ${p.q.url} --attributes ${policyArgument(p.policy.deadLetterTargetArn, SUGGESTED_MAX_RECEIVE_COUNT)}.`,
      });
    }
  }
  return out;
}

/** The DLQs with their vitals, and every finding, ordered by code and object. */
export function checkConnection(scope: ConnectionScope, seen: Seen): { dlqs: DlqVitals[]; findings: ConfigFinding[] } {
  const names = dlqNamesOf(scope, seen);
  const findings = [
    ...retentionFindings(names, seen),
    ...chainedFindings(names, seen),
    ...policyFindings(scope, names, seen),
  ];
  findings.sort((a, b) => a.code.localeCompare(b.code) || a.object.localeCompare(b.object));
  return { dlqs: names.map((n) => vitalsOf(n, seenQueue(seen, n)?.attrs ?? null)), findings };
}
