import "server-only";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { loadConfig } from "@/lib/config";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { ISSUE_STATES } from "@/lib/triage/issue-lifecycle";
import {
  JOB_DURATION_BUCKETS,
  issueStateCounts,
  jobDurations,
  letterTotals,
  type IssueStateCount,
  type JobDurations,
  type LetterTotal,
} from "./metrics-figures";
import { ownerResolver } from "./owners";
import type { DlqOverviewRow } from "./queries";
import { overviewRows } from "./queries";

/**
 * Prometheus exposition (DESIGN: "It exposes Prometheus metrics"), built with prom-client in a
 * Registry made for each scrape from what the database holds at that moment: the sampler's last
 * figures per DLQ (dlq_status), the redrive and discard ledgers, the finished jobs. No figure is
 * kept in a process, so every replica answers the same and a restart resets nothing. A scrape is
 * three queries and never a broker call.
 *
 * Labels are bounded: connection ids (from the config), DLQ names the sampler lists for a
 * configured connection, owner teams, job kinds and outcomes; never a letter, message or job id.
 */

export interface MetricFigures {
  /** Connection ids in the config: their counters are written even at zero, so rate() sees the first letter. */
  connections: string[];
  dlqs: DlqOverviewRow[];
  letters: LetterTotal[];
  jobs: JobDurations[];
  /** Failure groups per DLQ and lifecycle state. */
  issues: IssueStateCount[];
}

interface DlqGauge {
  name: string;
  help: string;
  value: (r: DlqOverviewRow, now: number) => number | null;
}

const DLQ_GAUGES: DlqGauge[] = [
  { name: "dlq_console_dlq_depth", help: "Letters in the DLQ at the last sampling round.", value: (r) => r.depth },
  {
    name: "dlq_console_dlq_in_flight",
    help: "Letters delivered and not yet settled (held by a consumer or a read) at the last round; absent on Kafka.",
    value: (r) => r.inFlight,
  },
  {
    name: "dlq_console_dlq_inflow_per_minute",
    help: "Letters entering the DLQ per minute over the last hour.",
    value: (r) => r.inflowPerMin,
  },
  {
    name: "dlq_console_dlq_oldest_age_seconds",
    help: "Age of the oldest letter (from the broker, or from the last scan).",
    value: (r, now) => (r.oldestAt ? Math.max(0, (now - Date.parse(r.oldestAt)) / 1000) : null),
  },
  {
    name: "dlq_console_dlq_retention_deadline_seconds",
    help: "Seconds until the oldest letter is lost to the DLQ's retention (negative: overdue); absent when letters are kept until removed.",
    value: (r, now) => (r.deadlineAt ? (Date.parse(r.deadlineAt) - now) / 1000 : null),
  },
  {
    name: "dlq_console_dlq_open_findings",
    help: "Open configuration findings about the DLQ.",
    value: (r) => r.openFindings,
  },
  { name: "dlq_console_dlq_firing_alerts", help: "Alert rules firing for the DLQ.", value: (r) => r.firingAlerts },
  {
    name: "dlq_console_dlq_sample_up",
    help: "1 when the last round reached the DLQ's broker, else 0.",
    value: (r) => (r.error ? 0 : 1),
  },
  {
    name: "dlq_console_dlq_sampled_timestamp_seconds",
    help: "When the DLQ was last sampled (Unix time).",
    value: (r) => Date.parse(r.sampledAt) / 1000,
  },
];

const LETTER_COUNTERS = [
  {
    name: "dlq_console_letters_redriven_total",
    outcome: "redriven",
    help: "Letters redriven: published to their target, confirmed, then removed from the DLQ (including ones that came back later), from the redrive ledgers.",
  },
  {
    name: "dlq_console_letters_parked_total",
    outcome: "parked",
    help: "Letters parked by redrives because they had been redriven too often, from the redrive ledgers.",
  },
  {
    name: "dlq_console_letters_discarded_total",
    outcome: "discarded",
    help: "Letters discarded (archived, then removed from the DLQ), from the discard ledgers.",
  },
] as const;

const JOB_DURATION = "dlq_console_job_duration_seconds";
const JOB_DURATION_HELP =
  "Wall time of finished jobs from first start to end, pauses included, by kind (every job the jobs table keeps).";

/**
 * A histogram whose buckets were counted by the database (metrics-figures.ts): prom-client's
 * Histogram only counts observations made in this process, so its output is replaced by the
 * database's counts, in the same shape prom-client writes its own.
 */
class CountedHistogram extends Histogram<"kind"> {
  constructor(
    registry: Registry,
    private readonly counted: Array<{ kind: string; count: number; sumSeconds: number; buckets: number[] }>,
  ) {
    super({
      name: JOB_DURATION,
      help: JOB_DURATION_HELP,
      labelNames: ["kind"],
      buckets: [...JOB_DURATION_BUCKETS],
      registers: [registry],
    });
  }

  private values() {
    return this.counted.flatMap((h) => [
      ...JOB_DURATION_BUCKETS.map((le, i) => ({
        metricName: `${JOB_DURATION}_bucket`,
        labels: { kind: h.kind, le },
        value: h.buckets[i],
      })),
      { metricName: `${JOB_DURATION}_bucket`, labels: { kind: h.kind, le: "+Inf" }, value: h.count },
      { metricName: `${JOB_DURATION}_sum`, labels: { kind: h.kind }, value: h.sumSeconds },
      { metricName: `${JOB_DURATION}_count`, labels: { kind: h.kind }, value: h.count },
    ]);
  }

  override async get() {
    // The fields Registry reads; typed through unknown because prom-client types `type` as an enum (numeric) that its runtime neither exports nor uses: the registry writes the string.
    const metric = {
      name: JOB_DURATION,
      help: JOB_DURATION_HELP,
      type: "histogram",
      aggregator: "sum",
      collect: () => undefined,
      values: this.values(),
    };
    return metric as unknown as Awaited<ReturnType<Histogram<"kind">["get"]>>;
  }

  /** What Registry#metrics reads (prom-client's own histogram answers it with the in-process counts). */
  async getForPromString() {
    return this.get();
  }
}

/** The exposition's registry for these figures. Pure: `now` fixes the ages. */
export function metricsRegistry(f: MetricFigures, now = Date.now()): Registry {
  const registry = new Registry();
  const configured = new Set(f.connections);
  // DLQs of a configured connection that the broker still lists: a connection taken out of the
  // config leaves its last rows in dlq_status, which would otherwise look sampled forever.
  const live = f.dlqs.filter((r) => !r.missingSince && configured.has(r.connectionId));
  for (const g of DLQ_GAUGES) {
    const gauge = new Gauge({
      name: g.name,
      help: g.help,
      labelNames: ["connection", "queue", "owner"],
      registers: [registry],
    });
    for (const r of live) {
      const v = g.value(r, now);
      if (v === null || !Number.isFinite(v)) continue;
      gauge.set({ connection: r.connectionId, queue: r.queue, owner: r.owner?.team ?? "" }, v);
    }
  }

  const groups = new Gauge({
    name: "dlq_console_dlq_failure_groups",
    help: "Failure groups of the DLQ by lifecycle state (new, acknowledged, resolved, regressed, ignored); every state is written, at zero too, for a DLQ with any group.",
    labelNames: ["connection", "queue", "owner", "state"],
    registers: [registry],
  });
  for (const i of f.issues) {
    if (!configured.has(i.connectionId)) continue;
    const dlq = { connection: i.connectionId, queue: i.queue, owner: i.owner };
    for (const state of ISSUE_STATES) groups.inc({ ...dlq, state }, 0);
    groups.inc({ ...dlq, state: i.state }, i.groups);
  }

  // A fresh registry each scrape: inc() from zero sets each counter to the ledgers' total.
  for (const c of LETTER_COUNTERS) {
    const counter = new Counter({ name: c.name, help: c.help, labelNames: ["connection"], registers: [registry] });
    for (const id of configured) counter.inc({ connection: id }, 0);
    for (const t of f.letters) if (t.outcome === c.outcome) counter.inc({ connection: t.connectionId }, t.letters);
  }
  const failed = new Counter({
    name: "dlq_console_letters_failed_total",
    help: "Letters a redrive or discard could not move or remove (refused by the broker, or their bytes no longer matched the index), from the ledgers.",
    labelNames: ["connection", "operation"],
    registers: [registry],
  });
  for (const id of configured)
    for (const operation of ["redrive", "discard"]) failed.inc({ connection: id, operation }, 0);
  for (const t of f.letters)
    if (t.outcome === "failed") failed.inc({ connection: t.connectionId, operation: t.operation }, t.letters);

  const finished = new Counter({
    name: "dlq_console_jobs_finished_total",
    help: "Jobs that ran and ended, by kind and outcome.",
    labelNames: ["kind", "outcome"],
    registers: [registry],
  });
  const byKind = new Map<string, { kind: string; count: number; sumSeconds: number; buckets: number[] }>();
  for (const j of f.jobs) {
    finished.inc({ kind: j.kind, outcome: j.outcome }, j.count);
    const k = byKind.get(j.kind) ?? {
      kind: j.kind,
      count: 0,
      sumSeconds: 0,
      buckets: JOB_DURATION_BUCKETS.map(() => 0),
    };
    k.count += j.count;
    k.sumSeconds += j.sumSeconds;
    j.buckets.forEach((n, i) => {
      k.buckets[i] += n;
    });
    byKind.set(j.kind, k);
  }
  new CountedHistogram(
    registry,
    [...byKind.values()].sort((a, b) => a.kind.localeCompare(b.kind)),
  );
  return registry;
}

/** The figures as the database holds them now. */
export async function loadMetricFigures(
  db: PrismaClient = getDb(),
  connections = loadConfig().connections.map((c) => c.id),
): Promise<MetricFigures> {
  const ownerOf = await ownerResolver();
  const [dlqs, letters, jobs, issues] = await Promise.all([
    overviewRows(ownerOf, new Date(), db),
    letterTotals(db),
    jobDurations(db),
    issueStateCounts(db, ownerOf),
  ]);
  return { connections, dlqs, letters, jobs, issues };
}

/** The text exposition and its content type. */
export async function exposition(f: MetricFigures, now = Date.now()): Promise<{ text: string; contentType: string }> {
  const registry = metricsRegistry(f, now);
  return { text: await registry.metrics(), contentType: registry.contentType };
}

/** For a scraper let in by token or network (no actor), or a signed-in user with ops:read. */
export async function renderMetrics(
  who: { actor: Actor; meta: RequestMeta } | "scraper",
): Promise<{ text: string; contentType: string }> {
  if (who !== "scraper") await authorize(who.actor, "ops:read", { action: "ops.metrics", meta: who.meta });
  return exposition(await loadMetricFigures());
}
