import "server-only";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerInspection, ConfigFinding, DlqVitals, InspectOptions } from "@/lib/brokers/contract/inspection";
import { shortName, topicPath, type PulsarAdmin, type TopicName } from "@/lib/brokers/pulsar/client";
import {
  EVICTION,
  mergeFindings,
  pulsarFindings,
  readAppliedPolicies,
  readNamespacePolicies,
  retentionKeeps,
  type PulsarPolicies,
} from "@/lib/brokers/pulsar/policies";

/**
 * The sampler's look at a Pulsar connection (`BrokerAdapter.inspect`), admin REST calls only, no
 * letter read, nothing acknowledged:
 *   3 per namespace of the DLQs (its retention, message TTL and backlog quotas: `readNamespacePolicies`),
 *   1 per DLQ topic (its stats, with the console subscription's backlog and oldest letter),
 *   3 per DLQ topic that exists (the policies that apply to it, `?applied=true`: a topic's own
 *     policy overrides the namespace's, and a broker default applies where neither sets one; the
 *     namespace's answers alone would miss both, and Pulsar has no call that returns them together).
 * `calls` counts them. At most CONCURRENCY topics are asked at once.
 *
 * A namespace or topic the console may not read (or that fails to answer) does not fail the look:
 * what could be read is returned, and a `pulsar.unreadable` finding says what could not be
 * checked. Only a broker that does not answer at all (or answers nothing but errors) fails it.
 *
 * A configured DLQ whose topic does not exist stays in `dlqs` with every figure null and has no
 * finding, as on RabbitMQ and Kafka (the adapter's listing already says it is missing).
 */

const CONCURRENCY = 8;

export interface PulsarInspectContext {
  admin: PulsarAdmin;
  /** The console's subscription on each DLQ topic (config `subscription`). */
  subscription: string;
  /** The DLQs `listDlqs` lists, in its order. */
  dlqs: Array<{ name: string; topic: TopicName }>;
  /** Config `createSubscription` (default true): only the wording of `pulsar.no_console_subscription` depends on it. */
  createSubscription?: boolean;
}

/** The part of a topic's stats the look reads (Pulsar 4.0.7, `stats?getEarliestTimeInBacklog=true`). */
interface TopicStats {
  subscriptions?: Record<
    string,
    {
      msgBacklog?: number;
      unackedMessages?: number;
      earliestMsgPublishTimeInBacklog?: number;
      totalMsgExpired?: number;
    }
  >;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: BrokerError };

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** A failure that is this one object's, not the broker's: recorded, the look goes on. */
async function attempt<T>(f: () => Promise<T>, signal?: AbortSignal): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    signal?.throwIfAborted();
    if (e instanceof BrokerError && e.kind !== "unreachable") return { ok: false, error: e };
    throw e;
  }
}

async function pool<T, R>(items: T[], limit: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * How long a letter stays in the console's subscription before Pulsar takes it away unseen: the
 * message TTL, or a consumer_backlog_eviction quota by age, whichever is shorter. Both count from
 * the letter's publish time on the DLQ topic (when the dead-lettering client published it: its
 * arrival). Null: kept until the console removes it. A size quota that evicts has no time and is
 * left to its finding.
 */
export function retentionMsOf(p: PulsarPolicies | null): number | null {
  if (!p) return null;
  const limits = [
    p.messageTtlSeconds && p.messageTtlSeconds > 0 ? p.messageTtlSeconds : null,
    p.backlogQuota?.policy === EVICTION ? p.backlogQuota.limitSeconds : null,
  ].filter((s): s is number => s !== null && s >= 0);
  return limits.length ? Math.min(...limits) * 1000 : null;
}

/** A DLQ's vitals from its stats; `stats` null: the topic does not exist or could not be read. */
export function vitalsOf(
  name: string,
  stats: TopicStats | null,
  subscription: string,
  policies: PulsarPolicies | null,
): DlqVitals {
  const sub = stats?.subscriptions?.[subscription];
  // earliestMsgPublishTimeInBacklog is the publish time of the entry after the subscription's
  // mark-delete position (0 when its backlog is empty). Letters the console acknowledged out of
  // order may sit before the first one still unhandled, so it errs early, never late.
  const earliest = num(sub?.earliestMsgPublishTimeInBacklog);
  return {
    name,
    queueType: "topic",
    // Without the console's subscription no backlog counts the letters (and nothing holds them).
    depth: sub ? (num(sub.msgBacklog) ?? 0) : null,
    // Letters delivered to a consumer of the console's subscription and not yet acknowledged (a move in progress).
    inFlight: sub ? num(sub.unackedMessages) : null,
    // The topic's msgInCounter would do, but Pulsar resets it when the topic is unloaded (a
    // restart, a bundle move, an idle topic): the sampler takes inflow from depth increases.
    enteredTotal: null,
    oldestAt: earliest && earliest > 0 ? new Date(earliest).toISOString() : null,
    // A TTL or quota acts on subscriptions: without the console's, retention alone decides how long
    // letters stay (null when it keeps none or has no time limit: the finding says which).
    retentionMs: !stats
      ? null
      : sub
        ? retentionMsOf(policies)
        : policies && retentionKeeps(policies) && (policies.retentionMinutes ?? 0) > 0
          ? policies.retentionMinutes! * 60_000
          : null,
    retentionClock: "arrival",
  };
}

function unreadable(tenant: string, object: string, dlq: string | null, what: string, e: BrokerError): ConfigFinding {
  return {
    code: "pulsar.unreadable",
    severity: "info",
    object,
    dlq,
    why: `The console could not read ${what}, so the checks that need it were not done: no finding here is not a clean bill. ${e.userMessage}`,
    fix:
      e.kind === "auth"
        ? `Pulsar lets a tenant's admins (and superusers) read namespace and topic policies and topic stats: add the console's role to tenant ${tenant}'s admin roles (pulsar-admin tenants update ${tenant} --admin-roles <its current admin roles>,<the console's role>; the list given replaces the old one).`
        : `Check the broker's logs about ${object}; the next look tries again.`,
  };
}

interface DlqLook {
  name: string;
  topic: TopicName;
  stats: Outcome<TopicStats | null>;
  applied: Outcome<PulsarPolicies | null> | null;
}

export async function inspectPulsar(ctx: PulsarInspectContext, opts: InspectOptions): Promise<BrokerInspection> {
  const { admin, subscription } = ctx;
  const { signal } = opts;
  const calls0 = admin.calls;
  signal?.throwIfAborted();

  const nsKey = (t: TopicName) => `${t.tenant}/${t.namespace}`;
  const namespaces = [...new Map(ctx.dlqs.map((d) => [nsKey(d.topic), d.topic])).entries()];
  const [nsOutcomes, looks] = await Promise.all([
    Promise.all(
      namespaces.map(
        async ([key, t]) =>
          [key, await attempt(() => readNamespacePolicies(admin, t.tenant, t.namespace, signal), signal)] as const,
      ),
    ),
    pool(ctx.dlqs, CONCURRENCY, async (d): Promise<DlqLook> => {
      const what = `read the stats of topic ${shortName(d.topic)}`;
      const stats = await attempt(
        () =>
          admin.get<TopicStats>(`persistent/${topicPath(d.topic)}/stats?getEarliestTimeInBacklog=true`, what, {
            notFound: "null",
            signal,
          }),
        signal,
      );
      const applied =
        stats.ok && stats.value ? await attempt(() => readAppliedPolicies(admin, d.topic, signal), signal) : null;
      return { ...d, stats, applied };
    }),
  ]);
  const nsPolicies = new Map(nsOutcomes);

  const outcomes = [
    ...nsOutcomes.map(([, o]) => o),
    ...looks.flatMap((l) => [l.stats, ...(l.applied ? [l.applied] : [])]),
  ];
  const failed = outcomes.filter((o): o is { ok: false; error: BrokerError } => !o.ok);
  // Nothing answered but errors (a token refused everywhere, a broker failing every call): the look failed.
  if (outcomes.length && failed.length === outcomes.length) throw failed[0].error;

  const findings: ConfigFinding[] = [];
  for (const [key, o] of nsOutcomes) {
    // A namespace that does not exist has no DLQ topics either: those are simply missing.
    if (!o.ok && o.error.kind !== "not_found")
      findings.push(
        unreadable(
          key.split("/")[0],
          `namespace ${key}`,
          null,
          `the retention, message TTL and backlog quotas of namespace ${key}`,
          o.error,
        ),
      );
  }
  const dlqs: DlqVitals[] = [];
  for (const l of looks) {
    const ns = nsPolicies.get(nsKey(l.topic))!;
    const namespace = ns.ok ? ns.value : null;
    const applied = l.applied?.ok ? l.applied.value : null;
    const stats = l.stats.ok ? l.stats.value : null;
    dlqs.push(vitalsOf(l.name, stats, subscription, applied ?? namespace));
    if (!l.stats.ok) {
      findings.push(
        unreadable(
          l.topic.tenant,
          `topic ${shortName(l.topic)}`,
          l.name,
          `the stats of dead-letter topic ${shortName(l.topic)}`,
          l.stats.error,
        ),
      );
      continue;
    }
    if (!stats) continue;
    if (l.applied && !l.applied.ok)
      findings.push(
        unreadable(
          l.topic.tenant,
          `topic ${shortName(l.topic)}`,
          l.name,
          `the policies that apply to dead-letter topic ${shortName(l.topic)} (the namespace's were used)`,
          l.applied.error,
        ),
      );
    const sub = stats.subscriptions?.[subscription];
    findings.push(
      ...pulsarFindings({
        topic: l.topic,
        dlq: l.name,
        subscription,
        subscribed: !!sub,
        policies: namespace,
        applied,
        createSubscription: ctx.createSubscription,
        expired: num(sub?.totalMsgExpired),
      }),
    );
  }
  return { dlqs, findings: mergeFindings(findings), calls: admin.calls - calls0 };
}
