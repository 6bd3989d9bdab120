import { describe, expect, it } from "vitest";
import { exposition, type MetricFigures } from "./metrics";
import { scraperAccess, scraperTokenMatches } from "./metrics-access";
import { JOB_DURATION_BUCKETS } from "./metrics-figures";
import type { DlqOverviewRow } from "./queries";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const row = (queue: string, over: Partial<DlqOverviewRow> = {}): DlqOverviewRow => ({
  connectionId: "local-rabbitmq",
  queue,
  queueType: "classic",
  sampledAt: "2026-12-02T09:59:30.000Z",
  depth: 3,
  inFlight: 1,
  inflowPerMin: 0.5,
  oldestAt: "2026-12-02T09:00:00.000Z",
  oldestSource: "broker",
  oldestAsOf: null,
  retentionMs: 7200_000,
  deadlineAt: "2026-12-02T11:00:00.000Z",
  error: null,
  missingSince: null,
  owner: { team: "Payments", contact: "#pay", source: "config" },
  openFindings: 1,
  worstFinding: "warning",
  firingAlerts: 0,
  lastAlertAt: null,
  trend: [],
  ...over,
});
const figures = (over: Partial<MetricFigures> = {}): MetricFigures => ({
  connections: ["local-rabbitmq"],
  dlqs: [],
  letters: [],
  jobs: [],
  issues: [],
  ...over,
});
const text = async (f: MetricFigures) => (await exposition(f, NOW)).text;
const samples = (t: string, name: string) =>
  t.split("\n").filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe("exposition", () => {
  it("writes one gauge line per DLQ and family, with the figures as of now", async () => {
    const t = await text(figures({ dlqs: [row("orders.dlq")] }));
    expect(t).toContain('dlq_console_dlq_depth{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 3\n');
    expect(t).toContain(
      'dlq_console_dlq_in_flight{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 1\n',
    );
    expect(t).toContain(
      'dlq_console_dlq_oldest_age_seconds{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 3600\n',
    );
    expect(t).toContain(
      'dlq_console_dlq_retention_deadline_seconds{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 3600\n',
    );
    expect(t).toContain(
      'dlq_console_dlq_inflow_per_minute{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 0.5\n',
    );
    expect(t).toContain(
      'dlq_console_dlq_sample_up{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 1\n',
    );
    expect(t).toContain("# TYPE dlq_console_dlq_depth gauge\n");
  });

  it("escapes hostile label values so a DLQ name cannot forge a line or a label", async () => {
    const t = await text(figures({ dlqs: [row('evil"} 1\ndlq_console_dlq_depth{queue="x\\', { owner: null })] }));
    expect(t).toContain('queue="evil\\"} 1\\ndlq_console_dlq_depth{queue=\\"x\\\\"');
    expect(samples(t, "dlq_console_dlq_depth")).toHaveLength(1);
  });

  it("leaves out unknown figures, DLQs the broker no longer lists and connections no longer configured", async () => {
    const t = await text(
      figures({
        dlqs: [
          row("kept", { deadlineAt: null, oldestAt: null }),
          row("gone", { missingSince: "2026-12-02T09:00:00.000Z" }),
          row("unconfigured", { connectionId: "removed-connection" }),
        ],
      }),
    );
    expect(samples(t, "dlq_console_dlq_retention_deadline_seconds")).toEqual([]);
    expect(samples(t, "dlq_console_dlq_oldest_age_seconds")).toEqual([]);
    expect(t).not.toContain('queue="gone"');
    expect(t).not.toContain("removed-connection");
    expect(t).toContain('queue="kept"');
  });

  it("counts ledger letters per connection, writes configured connections at zero, and keeps history of others", async () => {
    const t = await text(
      figures({
        connections: ["local-rabbitmq", "local-sqs"],
        letters: [
          { connectionId: "local-rabbitmq", operation: "redrive", outcome: "redriven", letters: 1200 },
          { connectionId: "local-rabbitmq", operation: "redrive", outcome: "failed", letters: 3 },
          { connectionId: "local-rabbitmq", operation: "discard", outcome: "failed", letters: 2 },
          { connectionId: "old-kafka", operation: "discard", outcome: "discarded", letters: 7 },
        ],
      }),
    );
    expect(t).toContain("# TYPE dlq_console_letters_redriven_total counter\n");
    expect(samples(t, "dlq_console_letters_redriven_total").sort()).toEqual([
      'dlq_console_letters_redriven_total{connection="local-rabbitmq"} 1200',
      'dlq_console_letters_redriven_total{connection="local-sqs"} 0',
    ]);
    expect(samples(t, "dlq_console_letters_discarded_total")).toContain(
      'dlq_console_letters_discarded_total{connection="old-kafka"} 7',
    );
    expect(samples(t, "dlq_console_letters_failed_total")).toEqual(
      expect.arrayContaining([
        'dlq_console_letters_failed_total{connection="local-rabbitmq",operation="redrive"} 3',
        'dlq_console_letters_failed_total{connection="local-rabbitmq",operation="discard"} 2',
        'dlq_console_letters_failed_total{connection="local-sqs",operation="redrive"} 0',
      ]),
    );
  });

  it("writes the database's job duration counts as a cumulative histogram per kind", async () => {
    const n = JOB_DURATION_BUCKETS.length;
    const cumulative = (upTo: Record<number, number>) =>
      JOB_DURATION_BUCKETS.map((le) => Object.entries(upTo).reduce((s, [b, c]) => s + (le >= Number(b) ? c : 0), 0));
    const t = await text(
      figures({
        jobs: [
          { kind: "scan", outcome: "succeeded", count: 3, sumSeconds: 12.5, buckets: cumulative({ 1: 1, 15: 2 }) },
          { kind: "scan", outcome: "failed", count: 1, sumSeconds: 100000, buckets: new Array(n).fill(0) },
          { kind: "redrive", outcome: "succeeded", count: 1, sumSeconds: 3000, buckets: cumulative({ 3600: 1 }) },
        ],
      }),
    );
    expect(t).toContain("# TYPE dlq_console_job_duration_seconds histogram\n");
    const scan = samples(t, "dlq_console_job_duration_seconds_bucket").filter((l) => l.includes('kind="scan"'));
    expect(scan[0]).toBe('dlq_console_job_duration_seconds_bucket{kind="scan",le="1"} 1');
    expect(scan).toContain('dlq_console_job_duration_seconds_bucket{kind="scan",le="15"} 3');
    expect(scan).toContain('dlq_console_job_duration_seconds_bucket{kind="scan",le="86400"} 3');
    expect(scan.at(-1)).toBe('dlq_console_job_duration_seconds_bucket{kind="scan",le="+Inf"} 4');
    expect(t).toContain('dlq_console_job_duration_seconds_sum{kind="scan"} 100012.5\n');
    expect(t).toContain('dlq_console_job_duration_seconds_count{kind="scan"} 4\n');
    expect(t).toContain('dlq_console_job_duration_seconds_count{kind="redrive"} 1\n');
    expect(t).toContain('dlq_console_jobs_finished_total{kind="scan",outcome="failed"} 1\n');
    expect(t).toContain('dlq_console_jobs_finished_total{kind="scan",outcome="succeeded"} 3\n');
  });

  it("labels with bounded names only: no letter, message or job id", async () => {
    const t = await text(
      figures({
        dlqs: [row("orders.dlq")],
        letters: [{ connectionId: "local-rabbitmq", operation: "redrive", outcome: "redriven", letters: 1 }],
        jobs: [
          { kind: "scan", outcome: "succeeded", count: 1, sumSeconds: 1, buckets: JOB_DURATION_BUCKETS.map(() => 1) },
        ],
      }),
    );
    const labelNames = new Set([...t.matchAll(/[{,]([a-z_]+)="/g)].map((m) => m[1]));
    expect([...labelNames].sort()).toEqual(["connection", "kind", "le", "operation", "outcome", "owner", "queue"]);
  });
});

describe("scraper access", () => {
  it("takes only the configured bearer token, and nothing when none is configured", () => {
    expect(scraperTokenMatches("Bearer s3cret", "s3cret")).toBe(true);
    expect(scraperTokenMatches("Bearer s3cre", "s3cret")).toBe(false);
    expect(scraperTokenMatches("s3cret", "s3cret")).toBe(false);
    expect(scraperTokenMatches(null, "s3cret")).toBe(false);
    expect(scraperTokenMatches("Bearer ", "")).toBe(false);
    expect(scraperTokenMatches("Bearer x", undefined)).toBe(false);
  });

  it("lets in an address inside DLQ_METRICS_ALLOW (v4, v6, single addresses), and nothing when it is unset", () => {
    const env = { DLQ_METRICS_ALLOW: "10.0.0.0/8, fd00::/8 192.168.1.7, not-an-address" };
    expect(scraperAccess(null, "10.20.30.40", env)).toBe("network");
    expect(scraperAccess(null, "fd12::1", env)).toBe("network");
    expect(scraperAccess(null, "192.168.1.7", env)).toBe("network");
    expect(scraperAccess(null, "192.168.1.8", env)).toBeNull();
    expect(scraperAccess(null, "11.0.0.1", env)).toBeNull();
    expect(scraperAccess(null, null, env)).toBeNull();
    expect(scraperAccess(null, "10.20.30.40", {})).toBeNull();
    expect(scraperAccess("Bearer t0ken", "11.0.0.1", { DLQ_METRICS_TOKEN: "t0ken" })).toBe("token");
    expect(scraperAccess("Bearer wrong", "11.0.0.1", { DLQ_METRICS_TOKEN: "t0ken" })).toBeNull();
  });

  it("writes failure groups per DLQ and state, every state at zero for a DLQ with any group, configured connections only", async () => {
    const t = await text(
      figures({
        issues: [
          { connectionId: "local-rabbitmq", queue: "orders.dlq", owner: "Payments", state: "new", groups: 2 },
          { connectionId: "local-rabbitmq", queue: "orders.dlq", owner: "Payments", state: "regressed", groups: 1 },
          { connectionId: "removed-connection", queue: "x.dlq", owner: "", state: "new", groups: 5 },
        ],
      }),
    );
    const lines = samples(t, "dlq_console_dlq_failure_groups");
    expect(lines).toEqual([
      'dlq_console_dlq_failure_groups{connection="local-rabbitmq",queue="orders.dlq",owner="Payments",state="new"} 2',
      'dlq_console_dlq_failure_groups{connection="local-rabbitmq",queue="orders.dlq",owner="Payments",state="acknowledged"} 0',
      'dlq_console_dlq_failure_groups{connection="local-rabbitmq",queue="orders.dlq",owner="Payments",state="resolved"} 0',
      'dlq_console_dlq_failure_groups{connection="local-rabbitmq",queue="orders.dlq",owner="Payments",state="regressed"} 1',
      'dlq_console_dlq_failure_groups{connection="local-rabbitmq",queue="orders.dlq",owner="Payments",state="ignored"} 0',
    ]);
    expect(t).toContain("# TYPE dlq_console_dlq_failure_groups gauge\n");
  });
});
