import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import { createUser } from "@/lib/auth/users";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { closeAllAdapters } from "@/lib/connections/registry";
import { AMQP_URL, RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { ELASTICMQ_ENDPOINT, SqsKit } from "@/lib/brokers/sqs/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { safeMoveHandler } from "@/lib/safety/handler";
import { planSafeMove, startSafeMove } from "@/lib/safety/use-cases";
import { scanHandler } from "@/lib/triage/scan";
import { openDlq } from "./open-dlq";
import { readRiskyOnce, riskyReadView } from "./risky-read";
import { viewLetter } from "./view-letter";

/**
 * Reading never costs a letter, through the use cases an operator's clicks reach, on the real
 * brokers: a RabbitMQ quorum DLQ with a delivery limit of 3 whose 10 letters RabbitMQ itself
 * dead-lettered, and an ElasticMQ DLQ that is itself the source of a redrive policy.
 */
const enc = (s: string) => Buffer.from(s, "utf8");
let operator: Actor;
const meta = (): RequestMeta => ({ requestId: `risky-${randomUUID()}`, ip: "127.0.0.1" });
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  const u = await createUser({
    email: `op-${randomUUID().slice(0, 8)}@risky.test`,
    role: "operator",
    password: "operator-password-long-enough",
  });
  operator = { id: u.id, email: u.email, name: u.name, role: "operator" };
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await closeAllAdapters();
});

/** Runs the queued job with this id to its end, as the console's worker would. */
async function runJob(jobId: string) {
  const worker = new JobWorker({
    handlers: { scan: scanHandler(), "safe-move": safeMoveHandler() },
    owner: `risky-${jobId}`,
    leaseMs: 20_000,
    scope: { jobIds: [jobId] },
  });
  expect((await worker.runOnce())?.id).toBe(jobId);
  return (await jobStore().get(jobId))!;
}

async function auditCount(action: string, queue: string) {
  return (await queryAudit({ action, queue }, { limit: 200 })).rows.length;
}

/** Every letter in a RabbitMQ queue, taken and acked on a connection of its own: message id → body. */
async function drain(queue: string): Promise<Map<string, { body: Buffer; deliveryCount: unknown; xDeath: unknown }>> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    const out = new Map<string, { body: Buffer; deliveryCount: unknown; xDeath: unknown }>();
    for (;;) {
      const m = await ch.get(queue, { noAck: true });
      if (!m) break;
      out.set(String(m.properties.messageId), {
        body: m.content,
        deliveryCount: m.properties.headers?.["x-delivery-count"],
        xDeath: m.properties.headers?.["x-death"],
      });
    }
    return out;
  } finally {
    await conn.close();
  }
}

describe("a RabbitMQ quorum DLQ with a delivery limit of 3", () => {
  const kit = new RabbitKit();
  cleanups.push(() => kit.cleanup());
  const letters = Array.from({ length: 10 }, (_, i) => ({
    body: enc(JSON.stringify({ order: i, note: `letter ${i}` })),
    messageId: `quorum-${i}`,
    headers: {
      "x-exception-class": "java.net.ConnectException",
      "x-exception-message": `Connection refused calling stock ${i}`,
    },
  }));
  const quorum = { "x-queue-type": "quorum", "x-delivery-limit": 3 };
  const ref = (queue: string) => ({ connectionId: "local-rabbitmq", queue });

  it("one confirmation is one read: page loads, letter views and reloads are served from the snapshot, and all 10 letters stay, byte for byte", async () => {
    const { dlq } = await kit.dlqByReject(letters, quorum);
    kit.queues.add(`${dlq}.safe`);
    // The page before anything was read: the risk, no read.
    const first = await openDlq(operator, meta(), { ...ref(dlq), page: 1, pageSize: 50 });
    expect(first.dlq.readRisk?.kind).toBe("delivery-limit");
    expect(first.letters).toBeNull();

    const { scan } = await readRiskyOnce(operator, meta(), ref(dlq));
    const done = await runJob(scan.id);
    expect(done.state).toBe("succeeded");
    expect(done.progress).toMatchObject({
      read: 10,
      readLoss: { before: 10, after: 10, seen: 10, vanished: 0, lostByNextRead: 0 },
    });
    expect(await auditCount("dlq.read_risky_confirmed", dlq)).toBe(1);
    expect(await auditCount("triage.scan_start", dlq)).toBe(1);

    // Five reloads, the snapshot view, and a letter opened: none of them reads the broker.
    for (let i = 0; i < 5; i++) {
      const page = await openDlq(operator, meta(), { ...ref(dlq), page: 1, pageSize: 50 });
      expect(page.letters).toBeNull();
      const view = await riskyReadView(operator, meta(), { ...ref(dlq), risk: page.dlq.readRisk! });
      expect(view.snapshot?.id).toBe(scan.id);
    }
    const snap = await getDb().triageLetter.findFirst({
      where: { connectionId: "local-rabbitmq", queue: dlq, messageId: "quorum-3" },
    });
    const opened = await viewLetter(operator, meta(), { ...ref(dlq), letterId: snap!.letterId });
    expect(opened.snapshot?.letter.messageId).toBe("quorum-3");
    expect(opened.letter).toBeNull(); // not read from the broker
    expect(await jobStore().list({ kind: "scan", ...ref(dlq) })).toHaveLength(1);

    // The broker's own count: the letters were delivered exactly once by the console (x-delivery-count 1 on the next delivery).
    const left = await drain(dlq);
    expect(left.size).toBe(10);
    for (const l of letters) {
      const got = left.get(l.messageId)!;
      expect(got.body.equals(Buffer.from(l.body))).toBe(true);
      expect(Number(got.deliveryCount)).toBe(1);
    }
  });

  it("a read the broker punishes is shown: letters at the limit are counted beforehand and their loss is measured and audited", async () => {
    const { dlq } = await kit.dlqByReject(letters.slice(0, 4), quorum);
    // Two confirmed reads: after the second, every letter was returned twice; the third loses none yet, the fourth all.
    const counts: unknown[] = [];
    for (let read = 1; read <= 4; read++) {
      const { scan } = await readRiskyOnce(operator, meta(), ref(dlq));
      const job = await runJob(scan.id);
      counts.push((job.progress as { readLoss: unknown }).readLoss);
    }
    // Read 3 saw x-delivery-count 2 on each letter (limit 3): the next read loses them, and said so.
    expect(counts[2]).toMatchObject({ seen: 4, vanished: 0, lostByNextRead: 4, limit: 3 });
    expect(counts[3]).toMatchObject({ before: 4, seen: 4, after: 0, vanished: 4 });
    const losses = (await queryAudit({ action: "dlq.read_loss", queue: dlq }, { limit: 10 })).rows;
    expect(losses).toHaveLength(1);
    expect(losses[0].details).toMatchObject({ vanished: 4, before: 4, after: 0 });
  });

  it("moved to safety first: the DLQ is empty, the safe queue holds all 10 byte for byte, read once each, with a ledger and audit rows", async () => {
    const { dlq } = await kit.dlqByReject(letters, quorum);
    kit.queues.add(`${dlq}.safe`);
    const plan = await planSafeMove(operator, meta(), ref(dlq));
    expect(plan).toMatchObject({ target: `${dlq}.safe`, targetExists: false, depth: 10 });
    const move = await startSafeMove(operator, meta(), { ...ref(dlq), target: plan!.target });
    const job = await runJob(move.id);
    expect(job.state).toBe("succeeded");
    expect(job.progress).toMatchObject({ moved: 10, failed: 0, dlqDepthAfter: 0, targetDepthAfter: 10 });

    const ledger = await getDb().redriveLetter.findMany({ where: { jobId: move.id }, orderBy: { seq: "asc" } });
    expect(ledger.map((r) => r.state)).toEqual(Array(10).fill("moved"));
    expect(ledger.map((r) => r.messageId)).toEqual(letters.map((l) => l.messageId));
    expect(await auditCount("letter.safe_move", dlq)).toBe(10);
    expect(await auditCount("dlq.safe_move_start", dlq)).toBe(1);
    expect(await auditCount("dlq.safe_move_finished", dlq)).toBe(1);

    // The safe queue is not risky: browsing it five times costs nothing.
    for (let i = 0; i < 5; i++)
      expect((await openDlq(operator, meta(), { ...ref(plan!.target), page: 1, pageSize: 50 })).letters).toHaveLength(
        10,
      );
    expect((await drain(dlq)).size).toBe(0);
    const safe = await drain(plan!.target);
    expect(safe.size).toBe(10);
    for (const l of letters) {
      const got = safe.get(l.messageId)!;
      expect(got.body.equals(Buffer.from(l.body))).toBe(true);
      expect(Array.isArray(got.xDeath)).toBe(true); // RabbitMQ's own history came along
    }
  });
});

describe("an SQS DLQ that is itself a redrive source (maxReceiveCount 3) on ElasticMQ", () => {
  const kit = new SqsKit(ELASTICMQ_ENDPOINT);
  cleanups.push(() => kit.cleanup());
  const ref = (queue: string) => ({ connectionId: "local-sqs", queue });
  const letters = Array.from({ length: 8 }, (_, i) => ({ body: enc(`{"invoice":${i}}`) }));

  async function chained() {
    const next = await kit.queue(kit.name("dlq-dlq"));
    const r = await kit.dlqByRedrive(letters, {
      maxReceiveCount: 3,
      dlqAttributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: next.arn, maxReceiveCount: 3 }) },
    });
    return { ...r, next };
  }

  it("browsing moves nothing; a confirmed read names where the letters went and how many, on the page and in the audit log", async () => {
    const c = await chained();
    for (let i = 0; i < 3; i++)
      expect((await openDlq(operator, meta(), { ...ref(c.dlq), page: 1, pageSize: 50 })).letters).toBeNull();
    expect(await kit.depth(c.dlqUrl)).toBe(8);
    expect(await kit.depth(c.next.url)).toBe(0);

    const { scan } = await readRiskyOnce(operator, meta(), ref(c.dlq));
    const job = await runJob(scan.id);
    const loss = (job.progress as { readLoss: Record<string, unknown> }).readLoss;
    expect(loss).toMatchObject({ before: 8, onwardQueue: c.next.name, movedOnward: 8, vanished: 8 });
    const view = await riskyReadView(operator, meta(), {
      ...ref(c.dlq),
      risk: (await openDlq(operator, meta(), { ...ref(c.dlq), page: 1, pageSize: 1 })).dlq.readRisk!,
    });
    expect(view.readLoss).toMatchObject({ movedOnward: 8, onwardQueue: c.next.name });
    const rows = (await queryAudit({ action: "dlq.read_loss", queue: c.dlq }, { limit: 5 })).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0].details).toMatchObject({ movedOnward: 8, onwardQueue: c.next.name });
  });

  it("moved to safety: nothing goes on to the DLQ's own DLQ, and the safe queue reads freely", async () => {
    const c = await chained();
    const plan = await planSafeMove(operator, meta(), ref(c.dlq));
    expect(plan).toMatchObject({ target: `${c.dlq}-safe`, depth: 8 });
    const move = await startSafeMove(operator, meta(), { ...ref(c.dlq), target: plan!.target });
    const job = await runJob(move.id);
    expect(job.state).toBe("succeeded");
    expect(job.progress).toMatchObject({ moved: 8, dlqDepthAfter: 0, targetDepthAfter: 8 });
    const safeUrl = (await kit.queue(plan!.target)).url; // exists already: CreateQueue answers its url, and the kit deletes it after
    expect(await kit.depth(c.next.url)).toBe(0);
    for (let i = 0; i < 3; i++)
      expect((await openDlq(operator, meta(), { ...ref(plan!.target), page: 1, pageSize: 50 })).letters).toHaveLength(
        8,
      );
    expect(await kit.depth(c.next.url)).toBe(0);
    expect(await kit.depth(safeUrl)).toBe(8);
    expect(await auditCount("dlq.safe_move_finished", c.dlq)).toBe(1);
  });
});
