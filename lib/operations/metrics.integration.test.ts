import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { AMQP_URL, testConfig as rabbitConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { exposition, loadMetricFigures } from "./metrics";
import { JOB_DURATION_BUCKETS, letterTotals } from "./metrics-figures";
import { sampleRound } from "./sampler";
import { refreshGroupSummary } from "@/lib/triage/index-store";
import { indexLetters, issueLetter } from "@/lib/triage/issue-fixtures.test-data";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * /api/metrics as Prometheus reads it: figures seeded into the real Postgres (dlq_status, the
 * redrive and discard ledgers, jobs) and sampled from a real RabbitMQ DLQ are rendered, checked by
 * Prometheus's own parser and linter (`promtool check metrics`, Debian's prometheus package;
 * scripts/test.sh installs it), and read back line by line. Each test uses its own connection ids
 * and job kinds, so what other tests left in the database does not change its figures.
 */
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

/** promtool's verdict: it prints nothing and exits 0 only when the exposition parses and passes its lint. */
function promtoolCheck(text: string): { status: number | null; output: string } {
  const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8", timeout: 30_000 });
  if (r.error) {
    throw new Error(
      `promtool could not be run (${(r.error as NodeJS.ErrnoException).code ?? r.error.message}): it comes from Debian's prometheus package; scripts/test.sh unpacks it into .cache/tools/usr/bin (ensure_promtool) and puts it on PATH`,
    );
  }
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** The value of the one sample with exactly this name and these labels (in this order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
  const head = `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${esc(v)}"`)
    .join(",")}} `;
  const lines = text.split("\n").filter((l) => l.startsWith(head));
  expect(lines.length, head).toBeLessThanOrEqual(1);
  return lines.length ? Number(lines[0].slice(head.length)) : undefined;
}

describe("metrics exposition on PostgreSQL, checked by promtool", () => {
  it("counts each DLQ's failure groups by lifecycle state, as the issues sync left them", async () => {
    const db = getDb();
    const connection = `metrics-issues-${randomUUID().slice(0, 8)}`;
    const queue = "orders.dlq";
    cleanups.push(() => db.failureIssue.deleteMany({ where: { connectionId: connection } }));
    const at = new Date(Date.now() - 60_000);
    await indexLetters(connection, queue, [
      issueLetter("a", at, { key: "a" }),
      issueLetter("b", at, { key: "b" }),
      issueLetter("c", at, { key: "c" }),
    ]);
    await refreshGroupSummary(connection, queue);
    await db.failureIssue.update({
      where: { connectionId_queue_groupKey: { connectionId: connection, queue, groupKey: "c" } },
      data: { state: "resolved", resolvedAt: new Date() },
    });
    const { text } = await exposition(await loadMetricFigures(db, [connection]));
    const of = (state: string) =>
      sample(text, "dlq_console_dlq_failure_groups", { connection, queue, owner: "", state });
    expect([of("new"), of("resolved"), of("regressed"), of("acknowledged"), of("ignored")]).toEqual([2, 1, 0, 0, 0]);
    // A connection no longer configured is left out.
    expect((await exposition(await loadMetricFigures(db, ["other"]))).text).not.toContain(connection);
  });

  it("renders seeded DLQ figures, ledger counters and job durations that promtool accepts, with the seeded figures", async () => {
    const db = getDb();
    const tag = randomUUID().slice(0, 8);
    const a = `metrics-a-${tag}`;
    const b = `metrics-b-${tag}`;
    const idle = `metrics-idle-${tag}`;
    const now = new Date();
    const ago = (ms: number) => new Date(now.getTime() - ms);
    const hostile = 'orders "eu"\\north\nline.dlq';
    cleanups.push(async () => {
      await db.$executeRawUnsafe(`DELETE FROM dlq_status WHERE connection_id = ANY($1::text[])`, [a, b, idle]);
      await db.$executeRawUnsafe(`DELETE FROM dlq_findings WHERE connection_id = ANY($1::text[])`, [a, b, idle]);
      await db.$executeRawUnsafe(`DELETE FROM dlq_owners WHERE connection_pattern = $1`, a);
      for (const table of ["redrive_letters", "discard_letters"]) {
        await db.$executeRawUnsafe(
          `DELETE FROM ${table} WHERE job_id IN (SELECT id FROM jobs WHERE connection_id = ANY($1::text[]))`,
          [a, b],
        );
      }
      await db.$executeRawUnsafe(`DELETE FROM jobs WHERE connection_id = ANY($1::text[])`, [a, b]);
    });

    await db.dlqOwner.create({
      data: { position: 0, connectionPattern: a, queuePattern: "orders*", team: 'Pay "ments"', contact: "#pay" },
    });
    await db.dlqStatus.createMany({
      data: [
        {
          connectionId: a,
          queue: "orders.dlq",
          queueType: "quorum",
          sampledAt: ago(10_000),
          depth: 42,
          inflowPerMin: 1.5,
          oldestAt: ago(3600_000),
          oldestSource: "broker",
          retentionMs: BigInt(7200_000),
          deadlineAt: new Date(now.getTime() + 3600_000),
        },
        { connectionId: a, queue: hostile, queueType: "classic", sampledAt: ago(10_000), depth: 0 },
        {
          connectionId: a,
          queue: "unreachable.dlq",
          queueType: "classic",
          sampledAt: ago(60_000),
          depth: 5,
          error: "The broker did not answer.",
        },
        {
          connectionId: a,
          queue: "deleted.dlq",
          queueType: "classic",
          sampledAt: ago(60_000),
          depth: 9,
          missingSince: ago(30_000),
        },
        {
          connectionId: b,
          queue: "payments-dlt",
          queueType: "kafka",
          sampledAt: ago(5_000),
          depth: 7,
          oldestAt: ago(90_000),
          oldestSource: "scan",
          oldestAsOf: ago(60_000),
        },
      ],
    });
    await db.dlqFinding.createMany({
      data: ["one", "two"].map((code) => ({
        connectionId: a,
        queue: "orders.dlq",
        code: `test.${code}`,
        severity: "warning",
        object: "orders.dlq",
        why: "test",
        fix: "test",
        firstSeenAt: now,
        lastSeenAt: now,
      })),
    });

    // Redrive and discard jobs with their ledgers (on this test's connections), and jobs of kinds
    // of their own for the durations (so other tests' jobs do not count there).
    const job = async (k: string, connectionId: string, state: string, seconds: number | null) => {
      const id = randomUUID();
      await db.job.create({
        data: {
          id,
          kind: k,
          connectionId,
          queue: `q-${id.slice(0, 8)}`,
          state,
          startedAt: seconds === null ? null : ago(seconds * 1000 + 1000),
          finishedAt: seconds === null ? null : ago(1000),
        },
      });
      return id;
    };
    const r1 = await job("redrive", a, "succeeded", 30);
    const r2 = await job("redrive", a, "failed", 30);
    const r3 = await job("redrive", b, "running", null);
    const d1 = await job("discard", a, "succeeded", 30);
    const ledger = async (
      table: "redrive_letters" | "discard_letters",
      jobId: string,
      states: Record<string, number>,
    ) => {
      const list = Object.entries(states).flatMap(([s, n]) => new Array<string>(n).fill(s));
      await db.$executeRawUnsafe(
        `INSERT INTO ${table} (job_id, seq, letter_id, sha256, state) SELECT $1::uuid, i, 'l-' || i, 'x', s FROM unnest($2::text[]) WITH ORDINALITY AS t(s, i)`,
        jobId,
        list,
      );
    };
    await ledger("redrive_letters", r1, {
      moved: 10,
      returned: 2,
      parked: 1,
      failed: 1,
      checksum_mismatch: 1,
      pending: 4,
      missing: 2,
      skipped: 1,
    });
    await ledger("redrive_letters", r2, { moved: 3, failed: 2, interrupted: 1, unconfirmed: 1 });
    await ledger("redrive_letters", r3, { moved: 5, moving: 3 });
    await ledger("discard_letters", d1, { discarded: 6, failed: 1, removing: 2, missing: 1 });
    const kind = { redrive: `redrive-${tag}`, discard: `discard-${tag}` };
    await job(kind.redrive, a, "succeeded", 0.5);
    await job(kind.redrive, a, "failed", 100);
    await job(kind.redrive, b, "running", null);
    await job(kind.discard, a, "succeeded", 4000);
    await job(kind.discard, a, "cancelled", null); // cancelled while queued: it never ran, no duration

    const figures = await loadMetricFigures(db, [a, b, idle]);
    const { text, contentType } = await exposition(figures, now.getTime());
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);

    const verdict = promtoolCheck(text);
    expect(verdict.output, text).toBe("");
    expect(verdict.status).toBe(0);

    // Per-DLQ gauges: the seeded figures, the hostile name intact, the deleted DLQ left out.
    const orders = { connection: a, queue: "orders.dlq", owner: 'Pay "ments"' };
    expect(sample(text, "dlq_console_dlq_depth", orders)).toBe(42);
    expect(sample(text, "dlq_console_dlq_inflow_per_minute", orders)).toBe(1.5);
    expect(sample(text, "dlq_console_dlq_oldest_age_seconds", orders)).toBe(3600);
    expect(sample(text, "dlq_console_dlq_retention_deadline_seconds", orders)).toBe(3600);
    expect(sample(text, "dlq_console_dlq_open_findings", orders)).toBe(2);
    expect(sample(text, "dlq_console_dlq_firing_alerts", orders)).toBe(0);
    expect(sample(text, "dlq_console_dlq_sample_up", orders)).toBe(1);
    expect(sample(text, "dlq_console_dlq_sampled_timestamp_seconds", orders)).toBe((now.getTime() - 10_000) / 1000);
    expect(sample(text, "dlq_console_dlq_depth", { connection: a, queue: hostile, owner: orders.owner })).toBe(0);
    expect(sample(text, "dlq_console_dlq_sample_up", { connection: a, queue: "unreachable.dlq", owner: "" })).toBe(0);
    expect(text).not.toContain("deleted.dlq");
    const kafka = { connection: b, queue: "payments-dlt", owner: "" };
    expect(sample(text, "dlq_console_dlq_depth", kafka)).toBe(7);
    expect(sample(text, "dlq_console_dlq_oldest_age_seconds", kafka)).toBe(90);
    expect(sample(text, "dlq_console_dlq_retention_deadline_seconds", kafka)).toBeUndefined();

    // Ledger counters per connection: moved and returned are redriven; only final failures count.
    expect(sample(text, "dlq_console_letters_redriven_total", { connection: a })).toBe(15);
    expect(sample(text, "dlq_console_letters_redriven_total", { connection: b })).toBe(5);
    expect(sample(text, "dlq_console_letters_parked_total", { connection: a })).toBe(1);
    expect(sample(text, "dlq_console_letters_failed_total", { connection: a, operation: "redrive" })).toBe(4);
    expect(sample(text, "dlq_console_letters_discarded_total", { connection: a })).toBe(6);
    expect(sample(text, "dlq_console_letters_failed_total", { connection: a, operation: "discard" })).toBe(1);
    expect(sample(text, "dlq_console_letters_discarded_total", { connection: b })).toBe(0);
    for (const name of ["redriven", "parked", "discarded"])
      expect(sample(text, `dlq_console_letters_${name}_total`, { connection: idle })).toBe(0);

    // Job durations: finished jobs that ran, cumulative buckets per kind.
    const bucket = (k: string, le: string) => sample(text, "dlq_console_job_duration_seconds_bucket", { kind: k, le });
    expect(bucket(kind.redrive, "1")).toBe(1);
    expect(bucket(kind.redrive, "60")).toBe(1);
    expect(bucket(kind.redrive, "120")).toBe(2);
    expect(bucket(kind.redrive, "+Inf")).toBe(2);
    expect(sample(text, "dlq_console_job_duration_seconds_count", { kind: kind.redrive })).toBe(2);
    expect(sample(text, "dlq_console_job_duration_seconds_sum", { kind: kind.redrive })).toBeCloseTo(100.5, 1);
    expect(bucket(kind.discard, "3600")).toBe(0);
    expect(bucket(kind.discard, "7200")).toBe(1);
    expect(bucket(kind.discard, String(JOB_DURATION_BUCKETS.at(-1)))).toBe(1);
    expect(sample(text, "dlq_console_job_duration_seconds_count", { kind: kind.discard })).toBe(1);
    expect(sample(text, "dlq_console_jobs_finished_total", { kind: kind.redrive, outcome: "failed" })).toBe(1);
    expect(
      sample(text, "dlq_console_jobs_finished_total", { kind: kind.discard, outcome: "cancelled" }),
    ).toBeUndefined();

    // Later scrapes: finished jobs are counted once per process, running ones each time; the
    // counters only grow while ledger rows are kept, and drop with a job that is deleted.
    const memo: NonNullable<Parameters<typeof letterTotals>[1]> = new Map();
    const totalOf = (t: Awaited<ReturnType<typeof letterTotals>>, connectionId: string, outcome: string) =>
      t.filter((x) => x.connectionId === connectionId && x.outcome === outcome).reduce((n, x) => n + x.letters, 0);
    expect(totalOf(await letterTotals(db, memo), a, "redriven")).toBe(15);
    expect([r1, r2, d1].every((id) => memo.has(id))).toBe(true);
    expect(memo.has(r3)).toBe(false);
    await db.$executeRawUnsafe(
      `UPDATE redrive_letters SET state = 'moved' WHERE job_id = $1::uuid AND state = 'moving'`,
      r3,
    );
    await db.$executeRawUnsafe(
      `UPDATE redrive_letters SET state = 'returned' WHERE job_id = $1::uuid AND state = 'moved'`,
      r2,
    );
    let later = await letterTotals(db, memo);
    expect(totalOf(later, a, "redriven")).toBe(15);
    expect(totalOf(later, b, "redriven")).toBe(8);
    await db.$executeRawUnsafe(`DELETE FROM discard_letters WHERE job_id = $1::uuid`, d1);
    await db.job.delete({ where: { id: d1 } });
    later = await letterTotals(db, memo);
    expect(memo.has(d1)).toBe(false);
    expect(totalOf(later, a, "discarded")).toBe(0);
    const text2 = (await exposition(await loadMetricFigures(db, [a, b, idle]), now.getTime())).text;
    expect(sample(text2, "dlq_console_letters_redriven_total", { connection: b })).toBe(8);
  });

  it("reports the depth a real RabbitMQ DLQ has, as the sampler read it", async () => {
    const name = `metrics-rmq-${randomUUID().slice(0, 8)}.dlq`;
    const conn = await amqp.connect(AMQP_URL);
    cleanups.push(() => conn.close());
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue(name, { durable: true });
    cleanups.push(() => ch.deleteQueue(name));
    for (let i = 0; i < 4; i++)
      ch.sendToQueue(name, Buffer.from(`letter ${i}`), {
        persistent: true,
        timestamp: Math.floor(Date.now() / 1000) - 600,
      });
    await ch.waitForConfirms();
    const adapter = new RabbitMqAdapter(
      rabbitConfig({ id: `metrics-rmq-${randomUUID().slice(0, 6)}`, discover: false, dlqs: [{ name }] }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    cleanups.push(() => adapter.close());
    cleanups.push(() =>
      getDb().$executeRawUnsafe(`DELETE FROM dlq_status WHERE connection_id = $1`, adapter.connectionId),
    );
    cleanups.push(() =>
      getDb().$executeRawUnsafe(`DELETE FROM dlq_findings WHERE connection_id = $1`, adapter.connectionId),
    );

    // The management API's figures lag the broker by a few seconds, and the depth and the head's
    // timestamp do not always arrive in the same answer.
    const labels = { connection: adapter.connectionId, queue: name, owner: "" };
    let text = "";
    for (let i = 0; i < 40; i++) {
      await sampleRound({ adapters: [adapter] });
      text = (await exposition(await loadMetricFigures(getDb(), [adapter.connectionId]))).text;
      if (
        sample(text, "dlq_console_dlq_depth", labels) === 4 &&
        sample(text, "dlq_console_dlq_oldest_age_seconds", labels) !== undefined
      )
        break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(sample(text, "dlq_console_dlq_depth", labels)).toBe(4);
    expect(sample(text, "dlq_console_dlq_sample_up", labels)).toBe(1);
    expect(sample(text, "dlq_console_dlq_oldest_age_seconds", labels)).toBeGreaterThanOrEqual(600);
    expect(sample(text, "dlq_console_dlq_open_findings", labels)).toBeGreaterThanOrEqual(1); // no owner
    const verdict = promtoolCheck(text);
    expect(verdict.output).toBe("");
    expect(verdict.status).toBe(0);
  });
});
