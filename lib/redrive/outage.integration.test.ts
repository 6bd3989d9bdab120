/**
 * RabbitMQ stopped and started mid-redrive (`rabbitmqctl stop_app` / `start_app`) under the real
 * engine, the registry's local-rabbitmq connection and its real mover. The job pauses itself with
 * the reason in the operator's words; it does NOT resume by itself: the operator resumes it once
 * the broker is back (README "Redrive"). Then it finishes and the count over the broker shows every
 * letter at its origin, none lost, duplicates only within the in-flight window and all tagged.
 * Runs rabbitmqctl, so it needs the privileges the test machine's CI has (root).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { AMQP_URL, drainRedriven, RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { redriveHandler } from "./handler";
import { getRedrive, planRedrive, resumeRedrive, startBulk, startRedrive } from "./use-cases";

const CONN = "local-rabbitmq";
const N = 1500;
const IN_FLIGHT = 64;
const rabbitmqctl = (...args: string[]) => execFileSync("rabbitmqctl", args, { stdio: "pipe", timeout: 120_000 });
const meta = () => ({ requestId: `ro-${randomUUID()}`, ip: "127.0.0.1" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kit = new RabbitKit();
let operator: Actor;

beforeAll(async () => {
  const u = await createUser({ email: `op-${randomUUID().slice(0, 8)}@redrive-outage.test`, role: "operator", password: "a-long-enough-password" });
  operator = { id: u.id, email: u.email, name: null, role: "operator" };
});
afterAll(async () => {
  // The kit's channel died with the broker: let it open a new one for the cleanup.
  Object.assign(kit as unknown as Record<string, unknown>, { ch: null, conn: null });
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/brokers/registry");
  await closeAllAdapters();
});

async function withChannel<T>(f: (ch: amqp.Channel) => Promise<T>): Promise<T> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    return await f(ch);
  } finally {
    await conn.close().catch(() => undefined);
  }
}
const depth = (q: string) => withChannel(async (ch) => (await ch.checkQueue(q)).messageCount);

const worker = () => new JobWorker({ handlers: { redrive: redriveHandler({ returnCheckMs: 300, verifyGraceMs: 1000 }) }, owner: `ro-${randomUUID().slice(0, 6)}`, leaseMs: 10_000, pollMs: 50 });

describe("redrive through a RabbitMQ outage", () => {
  it(
    "stop_app mid-bulk: the job pauses saying the broker cannot be reached; resumed after start_app it finishes with every letter at its origin",
    async () => {
      const letters = Array.from({ length: N }, (_, i) => ({ body: new TextEncoder().encode(`{"order":${i}}`), messageId: `m-${i}`, headers: { "x-exception-class": "java.net.SocketTimeoutException" } }));
      const { dlq, source } = await kit.dlqByReject(letters);
      const scanKind = `scan-ro-${randomUUID().slice(0, 8)}`;
      await jobStore().enqueue({ kind: scanKind as "scan", connectionId: CONN, queue: dlq, params: { acceptRisk: true } });
      await new JobWorker({ handlers: { [scanKind]: scanHandler() }, owner: scanKind, leaseMs: 30_000 }).runOnce();

      const selection = { kind: "filter", filter: {} };
      const preview = await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection });
      expect(preview.count).toBe(N);
      const r = await startRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection, fix: "outage test", confirmedCount: N, watchSeconds: 1, sample: { count: 5 }, rate: 300 });
      await worker().runOnce();
      expect((await getRedrive(operator, meta(), { jobId: r.id })).redrive).toMatchObject({ stage: "awaiting_bulk", sampleVerdict: "clean" });
      await startBulk(operator, meta(), { jobId: r.id });

      const running = worker().runOnce();
      while ((await depth(source)) < N / 4) await sleep(20);
      rabbitmqctl("stop_app");
      try {
        await running;
        const paused = (await getRedrive(operator, meta(), { jobId: r.id })).redrive;
        expect(paused.state).toBe("paused");
        expect(paused.pauseReason).toMatch(/^Paused: .*cannot be reached.*still in the DLQ; resume when the broker is back\.$/s);
      } finally {
        rabbitmqctl("start_app");
        rabbitmqctl("await_startup");
      }

      // Resumed by the operator (nothing resumes it by itself); the adapter reconnects.
      await resumeRedrive(operator, meta(), { jobId: r.id });
      await worker().runOnce();
      const done = (await jobStore().get(r.id))!;
      expect(done.state).toBe("succeeded");

      const states = Object.fromEntries(
        (await getDb().$queryRawUnsafe<Array<{ state: string; n: number }>>(`SELECT state, count(*)::int AS n FROM redrive_letters WHERE job_id = $1::uuid GROUP BY state`, r.id)).map((x) => [x.state, x.n]),
      ) as Record<string, number>;
      // Letters whose publish failed while the broker was down are recorded as failed and stay in
      // the DLQ (they are not retried by the resumed run yet); every letter is accounted for.
      expect((states.moved ?? 0) + (states.missing ?? 0) + (states.failed ?? 0)).toBe(N);

      const inDlq = await drainRedriven(dlq);
      const atOrigin = await drainRedriven(source);
      const ids = new Set([...inDlq, ...atOrigin].map((m) => m.messageId));
      const lost = Array.from({ length: N }, (_, i) => `m-${i}`).filter((id) => !ids.has(id));
      console.log(`[outage] ${JSON.stringify({ ledger: states, atOrigin: atOrigin.length, inDlq: inDlq.length, lost: lost.length })}`);
      expect(lost).toEqual([]);
      expect(inDlq).toHaveLength(states.failed ?? 0);
      expect(atOrigin.length - ids.size).toBeLessThanOrEqual(IN_FLIGHT);
      expect(atOrigin.filter((m) => m.redriveId !== r.id || !m.replayId)).toHaveLength(0);
    },
    180_000,
  );
});
