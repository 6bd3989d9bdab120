/**
 * The Pulsar policies that decide whether a dead-letter topic keeps its letters (retention, message
 * TTL, backlog quota), read from the admin API, and the configuration checks over them (the
 * sampler's findings). The reads are checked against Pulsar 4.0.7; the checks are pure.
 *
 * How Pulsar keeps a message, as its managed ledger trims (ManagedLedgerImpl): a message some
 * durable subscription has not acknowledged is never deleted. Once every subscription acknowledged
 * it, or when the topic has no subscription at all, it is kept only while retention says: a ledger
 * is deleted when it is older than the retention time or the topic is over the retention size, so a
 * time or a size of 0 keeps nothing, -1 is unlimited. Without retention a topic with no
 * subscription also may be deleted whole as inactive (brokerDeleteInactiveTopicsEnabled, on by
 * default). So the console's own durable subscription is what keeps letters in a DLQ topic; what
 * can still take them from it is a message TTL (it acknowledges expired messages on every
 * subscription) and a backlog quota with consumer_backlog_eviction (it moves the slowest
 * subscription past its oldest messages).
 */
import type { ConfigFinding, FindingSeverity } from "@/lib/brokers/contract/inspection";
import { shortName, topicPath, type PulsarAdmin, type TopicName } from "@/lib/brokers/pulsar/client";

export interface BacklogQuotaPolicy {
  /** destination_storage limitSize in bytes; null: no size limit (-1) or not governed by `policy`. */
  limitBytes: number | null;
  /** message_age limitTime in seconds; null: no age limit (-1) or not governed by `policy`. */
  limitSeconds: number | null;
  /** "producer_request_hold" | "producer_exception" | "consumer_backlog_eviction". */
  policy: string;
}

/**
 * Policies as one level answers them. At namespace level null means "not set here" (the broker's
 * default applies); an applied answer (topic, else namespace, else broker) sets every field.
 */
export interface PulsarPolicies {
  /** 0: none, -1: unlimited. */
  retentionMinutes: number | null;
  /** 0: none, -1: unlimited. */
  retentionSizeMb: number | null;
  /** 0: no TTL. */
  messageTtlSeconds: number | null;
  /** Null: no quota with a limit. */
  backlogQuota: BacklogQuotaPolicy | null;
}

interface RetentionAnswer {
  retentionTimeInMinutes?: number;
  retentionSizeInMB?: number;
}

interface QuotaAnswer {
  limit?: number;
  limitSize?: number;
  limitTime?: number;
  policy?: string;
}

type QuotaMapAnswer = Partial<Record<"destination_storage" | "message_age", QuotaAnswer>>;

export const EVICTION = "consumer_backlog_eviction";

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * The quotas of a backlogQuotaMap answer as one: those with a limit (-1 is none). When any of them
 * evicts, only the evicting ones count (that is the fault); else the first one's policy with every
 * limit. Null when no quota has a limit.
 */
export function backlogQuotaOf(map: QuotaMapAnswer | null): BacklogQuotaPolicy | null {
  if (!map) return null;
  const size = map.destination_storage;
  const age = map.message_age;
  const limited: Array<{ bytes: number | null; seconds: number | null; policy: string }> = [];
  const bytes = num(size?.limitSize ?? size?.limit);
  if (size && bytes !== null && bytes >= 0)
    limited.push({ bytes, seconds: null, policy: size.policy ?? "producer_request_hold" });
  const seconds = num(age?.limitTime);
  if (age && seconds !== null && seconds >= 0)
    limited.push({ bytes: null, seconds, policy: age.policy ?? "producer_request_hold" });
  if (!limited.length) return null;
  const evicting = limited.filter((q) => q.policy === EVICTION);
  const counted = evicting.length ? evicting : limited;
  return {
    limitBytes: counted.find((q) => q.bytes !== null)?.bytes ?? null,
    limitSeconds: counted.find((q) => q.seconds !== null)?.seconds ?? null,
    policy: counted[0].policy,
  };
}

function policiesOf(retention: RetentionAnswer | null, ttl: unknown, quotas: QuotaMapAnswer | null): PulsarPolicies {
  return {
    retentionMinutes: num(retention?.retentionTimeInMinutes),
    retentionSizeMb: num(retention?.retentionSizeInMB),
    messageTtlSeconds: num(ttl),
    backlogQuota: backlogQuotaOf(quotas),
  };
}

/**
 * A namespace's own policies: three requests. Pulsar 4.0.7 answers 200 with an empty body for a
 * retention or message TTL that is not set on the namespace, and `{}` for no backlog quota; a
 * namespace that does not exist is `not_found`.
 */
export async function readNamespacePolicies(
  admin: PulsarAdmin,
  tenant: string,
  namespace: string,
  signal?: AbortSignal,
): Promise<PulsarPolicies> {
  const ns = `${encodeURIComponent(tenant)}/${encodeURIComponent(namespace)}`;
  const what = (p: string) => `read the ${p} of namespace ${tenant}/${namespace}`;
  const [retention, ttl, quotas] = await Promise.all([
    admin.get<RetentionAnswer>(`namespaces/${ns}/retention`, what("retention"), { signal }),
    admin.get<number>(`namespaces/${ns}/messageTTL`, what("message TTL"), { signal }),
    admin.get<QuotaMapAnswer>(`namespaces/${ns}/backlogQuotaMap`, what("backlog quotas"), { signal }),
  ]);
  return policiesOf(retention, ttl, quotas);
}

/**
 * The policies that apply to one topic, whichever level sets them (topic policies need the
 * broker's topicLevelPoliciesEnabled, on by default and on the local broker): `?applied=true` answers the topic's own
 * value, else the namespace's, else the broker's default, in one request per policy (three per
 * topic; checked on 4.0.7, where a topic TTL of 0 overrides a namespace TTL and applied says 0).
 * Null when the topic does not exist.
 */
export async function readAppliedPolicies(
  admin: PulsarAdmin,
  topic: TopicName,
  signal?: AbortSignal,
): Promise<PulsarPolicies | null> {
  const base = `persistent/${topicPath(topic)}`;
  const what = (p: string) => `read the ${p} that applies to topic ${shortName(topic)}`;
  const o = { signal, notFound: "null" as const };
  const [retention, ttl, quotas] = await Promise.all([
    admin.get<RetentionAnswer>(`${base}/retention?applied=true`, what("retention"), o),
    admin.get<number>(`${base}/messageTTL?applied=true`, what("message TTL"), o),
    admin.get<QuotaMapAnswer>(`${base}/backlogQuotaMap?applied=true`, what("backlog quotas"), o),
  ]);
  // 4.0.7 answers the applied retention and quotas of an existing topic with a body: both null is its 404.
  if (retention === null && quotas === null) return null;
  const applied = policiesOf(retention, ttl, quotas);
  // Pulsar's defaults (no retention, no TTL) where an answer was empty.
  return {
    ...applied,
    retentionMinutes: applied.retentionMinutes ?? 0,
    retentionSizeMb: applied.retentionSizeMb ?? 0,
    messageTtlSeconds: applied.messageTtlSeconds ?? 0,
  };
}

/** Retention keeps letters that no subscription holds: neither its time nor its size is 0. */
export function retentionKeeps(p: Pick<PulsarPolicies, "retentionMinutes" | "retentionSizeMb">): boolean {
  return (p.retentionMinutes ?? 0) !== 0 && (p.retentionSizeMb ?? 0) !== 0;
}

/** "7 days", "2 hours 30 minutes", "45 seconds". */
export function secondsWords(s: number): string {
  const units: Array<[number, string]> = [
    [86_400, "day"],
    [3_600, "hour"],
    [60, "minute"],
    [1, "second"],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(s));
  for (const [size, word] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n} ${word}${n === 1 ? "" : "s"}`);
    rest -= n * size;
  }
  return parts.length ? parts.slice(0, 2).join(" ") : "0 seconds";
}

function bytesWords(b: number): string {
  for (const [size, unit] of [
    [1024 ** 4, "TiB"],
    [1024 ** 3, "GiB"],
    [1024 ** 2, "MiB"],
    [1024, "KiB"],
  ] as const) {
    if (b >= size) return `${+(b / size).toFixed(1)} ${unit}`;
  }
  return `${b} bytes`;
}

/** "for 7 days and up to 10 GiB", "without a time limit, up to 10 GiB", "without limit". */
function retentionWords(p: Pick<PulsarPolicies, "retentionMinutes" | "retentionSizeMb">): string {
  const m = p.retentionMinutes ?? 0;
  const mb = p.retentionSizeMb ?? 0;
  if (m < 0 && mb < 0) return "without limit";
  if (m < 0) return `without a time limit, up to ${bytesWords(mb * 1024 * 1024)}`;
  if (mb < 0) return `for ${secondsWords(m * 60)}, without a size limit`;
  return `for ${secondsWords(m * 60)} and up to ${bytesWords(mb * 1024 * 1024)}`;
}

const unlimited = (p: Pick<PulsarPolicies, "retentionMinutes" | "retentionSizeMb">) =>
  (p.retentionMinutes ?? 0) < 0 && (p.retentionSizeMb ?? 0) < 0;

/** What the checks know of one DLQ topic that exists. */
export interface DlqPolicyFacts {
  topic: TopicName;
  /** The DLQ's name as `listDlqs` gives it; default "tenant/namespace/topic". */
  dlq?: string;
  /** The console's subscription name (config `subscription`). */
  subscription: string;
  /** It exists on the topic. */
  subscribed: boolean;
  /** The namespace's own policies (`readNamespacePolicies`); null when they could not be read. */
  policies: PulsarPolicies | null;
  /**
   * The policies that apply to the topic (`readAppliedPolicies`: its own, else the namespace's,
   * else the broker's defaults). Absent or null: not read, and the namespace's count, with
   * Pulsar's defaults (none) for what it does not set; a topic's own policy is then not seen.
   */
  applied?: PulsarPolicies | null;
  /** The connection creates the subscription when missing (config `createSubscription`, default true). */
  createSubscription?: boolean;
  /** Letters the console's subscription lost to the message TTL since the topic was loaded (stats totalMsgExpired). */
  expired?: number | null;
}

/** Where the value in force comes from, for the object at fault and the command that fixes it. */
type Level = "namespace" | "topic" | "topic-or-broker";

function levelOf<T>(
  ns: PulsarPolicies | null,
  applied: PulsarPolicies | null | undefined,
  get: (p: PulsarPolicies) => T | null,
  same: (a: T, b: T) => boolean,
  absence: boolean,
): Level {
  if (!applied) return "namespace";
  const n = ns ? get(ns) : null;
  const a = get(applied);
  if (n === null) return absence ? "namespace" : "topic-or-broker";
  return a !== null && same(a, n) ? "namespace" : "topic";
}

/** The DLQ's policies in force: the applied ones, else the namespace's with Pulsar's defaults (none) for what it does not set. */
function inForce(f: DlqPolicyFacts): PulsarPolicies | null {
  if (f.applied) return f.applied;
  if (!f.policies) return null;
  const n = f.policies;
  return {
    retentionMinutes: n.retentionMinutes ?? 0,
    retentionSizeMb: n.retentionSizeMb ?? 0,
    messageTtlSeconds: n.messageTtlSeconds ?? 0,
    backlogQuota: n.backlogQuota,
  };
}

/**
 * The configuration faults that lose or risk the letters of one DLQ topic. Faults of the
 * namespace name it as their object ("namespace public/orders"), so several DLQs of one namespace
 * give one finding each with the same code and object: `mergeFindings` makes them one.
 */
export function pulsarFindings(f: DlqPolicyFacts): ConfigFinding[] {
  const dlq = f.dlq ?? shortName(f.topic);
  const full = `persistent://${shortName(f.topic)}`;
  const ns = `${f.topic.tenant}/${f.topic.namespace}`;
  const out: ConfigFinding[] = [];
  const add = (code: string, severity: FindingSeverity, level: Level, why: string, fix: string) =>
    out.push({
      code: `pulsar.${code}`,
      severity,
      object: level === "namespace" ? `namespace ${ns}` : `topic ${shortName(f.topic)}`,
      dlq,
      why,
      fix,
    });
  const p = inForce(f);
  const keeps = p ? retentionKeeps(p) : null;

  if (!f.subscribed) {
    const create = `pulsar-admin topics create-subscription -s ${f.subscription} -m earliest ${full}`;
    const held =
      keeps === null
        ? "Its retention could not be read, so whether Pulsar keeps them at all is unknown."
        : keeps
          ? unlimited(p!)
            ? "Unlimited retention keeps them for now, but a retention change or a topic deletion takes them with nothing to warn about it."
            : `Retention keeps them ${retentionWords(p!)}, and no longer: older letters are deleted whether or not anyone handled them.`
          : "There is no retention on it, so Pulsar deletes them whenever it trims the topic's ledgers (at the latest when a ledger rolls over, every few hours, or the topic is unloaded), and it can delete the whole topic once no producer is connected (brokerDeleteInactiveTopicsEnabled, on by default).";
    add(
      "no_console_subscription",
      keeps === true ? "warning" : "critical",
      "topic",
      `Dead-letter topic ${dlq} has no subscription "${f.subscription}", the console's own: no subscription holds its letters. ${held} The console also counts the DLQ's depth and marks letters handled on that subscription.`,
      f.createSubscription !== false
        ? `The console creates the subscription (from the earliest letter still stored) the next time it opens this DLQ; to do it now: ${create}`
        : `createSubscription is off for this connection: create it from the earliest letter still stored: ${create}`,
    );
  }

  if (p && keeps === false) {
    // Info, not warning: while the console's subscription exists it holds every letter it has not
    // handled, whatever retention says; only deleting that subscription (or the topic) loses them,
    // which takes an operator's act. A DLQ topic without the subscription is already critical
    // under no_console_subscription, which says that retention is missing.
    const level = levelOf(
      f.policies,
      f.applied,
      (x) => (x.retentionMinutes === null && x.retentionSizeMb === null ? null : x),
      (a, b) => a.retentionMinutes === b.retentionMinutes && a.retentionSizeMb === b.retentionSizeMb,
      true,
    );
    const where =
      level === "namespace"
        ? `Namespace ${ns} has no retention`
        : `Topic ${dlq} has no retention (its own policy overrides the namespace's)`;
    add(
      "no_retention",
      "info",
      level,
      `${where} (retentionTimeInMinutes=${p.retentionMinutes}, retentionSizeInMB=${p.retentionSizeMb}): only the console's subscription "${f.subscription}" keeps the letters of dead-letter topic ${dlq}. Deleting that subscription, or resetting it past them, loses them all at the next trim, and a letter the console has moved or discarded cannot be brought back from Pulsar.`,
      level === "namespace"
        ? `Set a retention on the namespace: pulsar-admin namespaces set-retention ${ns} --time 7d --size 10G (or on this DLQ topic alone: pulsar-admin topicPolicies set-retention ${full} --time 7d --size 10G). Retention also keeps acknowledged letters for that long, so the storage grows by the letters of 7 days.`
        : `Remove the topic's own retention so the namespace's applies: pulsar-admin topicPolicies remove-retention ${full}, or give it one: pulsar-admin topicPolicies set-retention ${full} --time 7d --size 10G`,
    );
  }

  const ttl = p?.messageTtlSeconds ?? 0;
  if (p && ttl > 0) {
    const level = levelOf(
      f.policies,
      f.applied,
      (x) => x.messageTtlSeconds,
      (a, b) => a === b,
      false,
    );
    const where =
      level === "namespace"
        ? `Namespace ${ns} has a message TTL of ${secondsWords(ttl)}`
        : level === "topic"
          ? `Topic ${dlq} has a message TTL of ${secondsWords(ttl)} (its own policy)`
          : `A message TTL of ${secondsWords(ttl)} applies to topic ${dlq} (set on the topic, or the broker's ttlDurationDefaultInSeconds)`;
    const expired =
      f.expired && f.expired > 0
        ? ` Pulsar has expired ${f.expired} letter${f.expired === 1 ? "" : "s"} on it since the topic was last loaded.`
        : "";
    const after = keeps
      ? `Retention then keeps them ${retentionWords(p)}, out of the console's sight (pulsar-admin topics reset-cursor -s ${f.subscription} -t <how long ago> ${full} brings them back into the subscription); after that they are deleted.`
      : "With no retention, they are deleted at the next trim.";
    add(
      "message_ttl",
      "critical",
      level,
      `${where} (ttl ${ttl} s): Pulsar acknowledges (expires) every message older than that on every subscription, the console's "${f.subscription}" included. A letter of dead-letter topic ${dlq} that nobody handled within ${secondsWords(ttl)} of its arrival leaves the DLQ unseen. ${after}${expired}`,
      level === "namespace"
        ? `Remove the namespace's message TTL: pulsar-admin namespaces remove-message-ttl ${ns}; or keep it for the namespace's other topics and switch it off for this DLQ topic alone (a topic policy wins): pulsar-admin topicPolicies set-message-ttl ${full} -t 0`
        : `Switch the TTL off for this DLQ topic (a topic policy wins over the namespace's and the broker's): pulsar-admin topicPolicies set-message-ttl ${full} -t 0`,
    );
  }

  const quota = p?.backlogQuota ?? null;
  if (quota && quota.policy === EVICTION) {
    const level = levelOf(
      f.policies,
      f.applied,
      (x) => x.backlogQuota,
      (a, b) => a.policy === b.policy && a.limitBytes === b.limitBytes && a.limitSeconds === b.limitSeconds,
      false,
    );
    const limits = [
      quota.limitBytes !== null ? `${bytesWords(quota.limitBytes)} of backlog (destination_storage)` : null,
      quota.limitSeconds !== null ? `letters older than ${secondsWords(quota.limitSeconds)} (message_age)` : null,
    ]
      .filter(Boolean)
      .join(" or ");
    const owner =
      level === "namespace" ? `Namespace ${ns} has` : level === "topic" ? `Topic ${dlq} has` : `Topic ${dlq} is under`;
    const types = [
      ...(quota.limitBytes !== null ? [["destination_storage", `-l ${quota.limitBytes}`]] : []),
      ...(quota.limitSeconds !== null ? [["message_age", `-lt ${quota.limitSeconds}`]] : []),
    ];
    const each = (cmd: (type: string, limit: string) => string) =>
      types.map(([type, limit]) => cmd(type, limit)).join("; ");
    add(
      "backlog_eviction",
      "critical",
      level,
      `${owner} a backlog quota with policy consumer_backlog_eviction${level === "topic-or-broker" ? " (set on the topic, or the broker's backlogQuotaDefault settings)" : ""}: once the backlog reaches ${limits}, Pulsar moves the slowest subscription past its oldest messages. On dead-letter topic ${dlq} that is the console's subscription "${f.subscription}": its oldest letters are dropped unseen.`,
      level === "namespace"
        ? `Remove the quota: ${each((t) => `pulsar-admin namespaces remove-backlog-quota ${ns} -t ${t}`)}; or make it hold the dead-lettering producer instead of dropping letters: ${each((t, l) => `pulsar-admin namespaces set-backlog-quota ${ns} -t ${t} ${l} -p producer_request_hold`)}`
        : `Give this DLQ topic a quota that holds the dead-lettering producer instead of dropping letters: ${each((t, l) => `pulsar-admin topicPolicies set-backlog-quota ${full} -t ${t} ${l} -p producer_request_hold`)}${level === "topic" ? `; or remove its own so the namespace's applies: ${each((t) => `pulsar-admin topicPolicies remove-backlog-quota ${full} -t ${t}`)}` : ""}`,
    );
  }
  return out;
}

/**
 * One finding per code and object: the sampler keys findings by them, so a namespace's fault seen
 * from several of its DLQs becomes one, naming the first DLQ and listing the others.
 */
export function mergeFindings(findings: ConfigFinding[]): ConfigFinding[] {
  const groups = new Map<string, ConfigFinding[]>();
  for (const f of findings) {
    const k = `${f.code}\u0000${f.object}`;
    groups.set(k, [...(groups.get(k) ?? []), f]);
  }
  const rank: Record<FindingSeverity, number> = { critical: 2, warning: 1, info: 0 };
  return [...groups.values()].map((g) => {
    if (g.length === 1) return g[0];
    const sorted = [...g].sort(
      (a, b) => rank[b.severity] - rank[a.severity] || (a.dlq ?? "").localeCompare(b.dlq ?? ""),
    );
    const others = [
      ...new Set(
        sorted
          .slice(1)
          .map((f) => f.dlq)
          .filter((d): d is string => !!d && d !== sorted[0].dlq),
      ),
    ];
    return others.length
      ? {
          ...sorted[0],
          why: `${sorted[0].why} The same holds for dead-letter topic${others.length === 1 ? "" : "s"} ${others.join(", ")}.`,
        }
      : sorted[0];
  });
}
