import { randomUUID } from "node:crypto";
import { DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import amqp, { type ChannelModel } from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as getRedriveRoute } from "@/app/api/v1/redrives/[id]/route";
import { POST as bulkRoute } from "@/app/api/v1/redrives/[id]/bulk/route";
import { deadLetterHeaders, KafkaKit } from "@/lib/brokers/kafka/test-kit";
import { PulsarSocket, shortName, topicPath, type TopicName } from "@/lib/brokers/pulsar/client";
import { APP_SUBSCRIPTION, dlqOf, PulsarKit } from "@/lib/brokers/pulsar/test-kit";
import { AMQP_URL, mgmtRequest, RabbitKit, VHOST } from "@/lib/brokers/rabbitmq/test-kit";
import { ELASTICMQ_ENDPOINT, SqsKit } from "@/lib/brokers/sqs/test-kit";
import type { SampleEvidence } from "@/lib/brokers/target-readers";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { callV1, expectDocumented, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import { redriveHandler, type RedriveDeps } from "./handler";
import { getRedrive, pauseRedrive, planRedrive, resumeRedrive, startBulk, startRedrive } from "./use-cases";

/**
 * A sample verdict says what it saw, end to end on the real brokers: letters
 * dead-lettered for real (RabbitMQ: rejected; Kafka: a Spring-style DLT; SQS: the queue's own
 * redrive policy; Pulsar: a consumer's dead-letter policy), scanned, then a sample redriven and
 * watched. Nobody consumes the origin: inconclusive, with the evidence, and the rest starts only
 * with "continue anyway" and a reason. A consumer that processes the copies: clean. One that
 * rejects them (they dead-letter back): returned. The engine's verdict, its audit row, the job's
 * progress and the v1 API say the same.
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => new TextEncoder().encode(s);
const meta = () => ({ requestId: `sv-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new RabbitKit();
const kafka = new KafkaKit();
const sqs = new SqsKit(ELASTICMQ_ENDPOINT);
const pulsar = new PulsarKit();
const FAST: Partial<RedriveDeps> = { returnCheckMs: 300, verifyGraceMs: 1000 };
const conns: ChannelModel[] = [];
const kafkaConsumers: Array<() => Promise<void>> = [];
let users: Record<"viewer" | "operator" | "admin", V1User>;

beforeAll(async () => {
  users = await v1Users("sample-verdict", ["viewer", "operator", "admin"] as const);
});
afterAll(async () => {
  for (const c of conns) await c.close().catch(() => undefined);
  for (const stop of kafkaConsumers) await stop().catch(() => undefined);
  await kit.cleanup();
  await kafka.cleanup();
  await sqs.cleanup();
  await pulsar.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

async function scan(connectionId: string, queue: string) {
  const kind = `scan-sv-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({ kind: kind as "scan", connectionId, queue, params: { acceptRisk: true } });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 30_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

async function seeded(n: number) {
  const { dlq, source } = await kit.dlqByReject(
    Array.from({ length: n }, (_, i) => ({
      body: enc(`{"order":${i}}`),
      messageId: `m-${i}`,
      headers: { "x-exception-class": "java.net.SocketTimeoutException" },
    })),
  );
  await scan(CONN, dlq);
  return { dlq, source };
}

/** A worker that runs only this job. */
const worker = (jobId: string) =>
  new JobWorker({
    handlers: { redrive: redriveHandler(FAST) },
    owner: `sv-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    pollMs: 50,
    scope: { jobIds: [jobId] },
  });

const selection = { kind: "filter", filter: {} };
type QueueStats = { messages?: number; message_stats?: { ack?: number } };

async function start(dlq: string, plan: Record<string, unknown> = {}, connectionId = CONN) {
  const preview = await planRedrive(users.operator.actor, meta(), {
    connectionId,
    queue: dlq,
    selection,
    ...(plan.target ? { target: plan.target } : {}),
  });
  return startRedrive(users.operator.actor, meta(), {
    connectionId,
    queue: dlq,
    selection,
    fix: "orders 2.3.2 raises the payments timeout",
    confirmedCount: preview.count,
    sample: { count: 2 },
    watchSeconds: 1,
    ...plan,
  });
}

/** A consumer on a connection of its own that acks, or rejects without requeue (the copy dead-letters back). */
async function consumer(queue: string, how: "ack" | "reject") {
  const conn = await amqp.connect(AMQP_URL);
  conn.on("error", () => undefined);
  conns.push(conn);
  const ch = await conn.createChannel();
  ch.on("error", () => undefined);
  const got: string[] = [];
  await ch.consume(queue, (m) => {
    if (!m) return;
    got.push(String(m.properties.messageId));
    if (how === "ack") ch.ack(m);
    else ch.nack(m, false, false);
  });
  return { got, stop: () => conn.close().catch(() => undefined) };
}

async function waitFor<T>(look: () => Promise<T>, ok: (v: T) => boolean, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await look();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`not reached within ${ms} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const auditOf = (jobId: string, action: string) =>
  getDb().auditEvent.findMany({ where: { operationId: jobId, action }, orderBy: { id: "asc" } });

/** The verdict and its evidence as the view, the job's progress, the audit row and the v1 API give them. */
async function everywhere(jobId: string) {
  const { redrive } = await getRedrive(users.viewer.actor, meta(), { jobId });
  const sample = (redrive.progress as { sample?: { verdict?: string; evidence?: SampleEvidence[] } }).sample;
  const [row] = await auditOf(jobId, "redrive.sample_verdict");
  const details = row.details as unknown as { verdict: string; evidence: SampleEvidence[]; text: string };
  const api = await callV1(getRedriveRoute as V1Handler, `/api/v1/redrives/${jobId}`, {
    token: users.viewer.token,
    params: { id: jobId },
  });
  expect(api.status).toBe(200);
  await expectDocumented("get", "/api/v1/redrives/{id}", api.res, api.body);
  expect(sample?.verdict).toBe(redrive.sampleVerdict);
  expect(sample?.evidence).toEqual(redrive.sampleEvidence);
  expect(details.verdict).toBe(redrive.sampleVerdict);
  expect(details.evidence).toEqual(redrive.sampleEvidence);
  expect(details.text).toBe(redrive.pauseReason);
  expect(api.body.redrive.sampleVerdict).toBe(redrive.sampleVerdict);
  expect(api.body.redrive.sampleEvidence).toEqual(redrive.sampleEvidence);
  return redrive;
}

describe("sample verdict on RabbitMQ", () => {
  it("nobody consumes the origin: the form warns, the verdict is inconclusive with the evidence, and the rest needs 'continue anyway' with a reason, audited", async () => {
    const { dlq, source } = await seeded(4);
    const preview = await planRedrive(users.operator.actor, meta(), { connectionId: CONN, queue: dlq, selection });
    expect(preview.readers).toEqual([
      {
        target: source,
        readers: expect.objectContaining({ target: source, count: 0 }),
        error: null,
        warning: `Nobody consumes queue ${source}: a sample sent there cannot come back, so its verdict will be inconclusive.`,
      },
    ]);
    // A named target is asked about by name.
    const named = await planRedrive(users.operator.actor, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      target: { kind: "queue", name: source },
    });
    expect(named.readers.map((x) => [x.target, x.readers?.count])).toEqual([[source, 0]]);

    const r = await start(dlq);
    await worker(r.id).runOnce();
    const v = await everywhere(r.id);
    expect(v).toMatchObject({
      state: "paused",
      stage: "awaiting_bulk",
      sampleVerdict: "inconclusive",
      sampleReturned: 0,
      bulk: { ready: true, needsOverride: false, needsReason: true },
    });
    expect(v.sampleEvidence).toEqual([
      expect.objectContaining({ target: source, state: "no_reader", readers: expect.objectContaining({ count: 0 }) }),
    ]);
    expect(v.pauseReason).toMatch(/^Sample inconclusive: none of the 2 sample letters came back within 1 s/);
    expect(v.pauseReason).toContain(`No consumer on queue "${source}"`);
    // The marks the watch judged against are kept with the job.
    const plan = await getDb().redrivePlan.findUniqueOrThrow({ where: { jobId: r.id } });
    expect((plan.sampleWatch as { marks: Array<{ target: string; mark: unknown }> }).marks).toEqual([
      expect.objectContaining({ target: source, mark: expect.objectContaining({ queue: source }) }),
    ]);

    // Server-enforced: no reason, no start (the use case and the v1 route); a viewer not at all.
    await expect(startBulk(users.operator.actor, meta(), { jobId: r.id })).rejects.toMatchObject({
      code: "bad_request:continue-reason",
    });
    const bare = await callV1(bulkRoute as V1Handler, `/api/v1/redrives/${r.id}/bulk`, {
      token: users.operator.token,
      json: {},
      params: { id: r.id },
    });
    expect(bare.status).toBe(400);
    expect(bare.body.detail ?? bare.body.message ?? bare.text).toMatch(/inconclusive/);
    await expect(
      startBulk(users.viewer.actor, meta(), { jobId: r.id, continueAnywayReason: "I am only a viewer" }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^forbidden:/) });
    expect((await jobStore().get(r.id))?.state).toBe("paused");

    const go = await callV1(bulkRoute as V1Handler, `/api/v1/redrives/${r.id}/bulk`, {
      token: users.operator.token,
      json: { continueAnywayReason: "orders-consumer is scaled to 0 for the migration; it reads them at 02:00" },
      params: { id: r.id },
    });
    expect(go.status).toBe(200);
    expect(go.body).toMatchObject({ stage: "bulk", bulkOverrideReason: expect.stringContaining("scaled to 0") });
    const [cont] = await auditOf(r.id, "redrive.continue_anyway");
    expect(cont).toMatchObject({ outcome: "success", actorEmail: users.operator.actor.email });
    expect(cont.details).toMatchObject({
      verdict: "inconclusive",
      reason: "orders-consumer is scaled to 0 for the migration; it reads them at 02:00",
      evidence: v.sampleEvidence,
    });
    const [bulkRow] = (await auditOf(r.id, "redrive.bulk_start")).filter((a) => a.outcome === "success");
    expect(bulkRow.details).toMatchObject({ verdict: "inconclusive", continueAnywayReason: expect.any(String) });

    await worker(r.id).runOnce();
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");
    expect(await kit.depth(source)).toBe(4);
    expect(await kit.depth(dlq)).toBe(0);
  });

  it("a consumer that processes the copies: clean, and the rest starts without a reason", async () => {
    const { dlq, source } = await seeded(3);
    const c = await consumer(source, "ack");
    const preview = await planRedrive(users.operator.actor, meta(), { connectionId: CONN, queue: dlq, selection });
    expect(preview.readers).toEqual([
      expect.objectContaining({ target: source, warning: null, readers: expect.objectContaining({ count: 1 }) }),
    ]);
    const r = await start(dlq);
    await worker(r.id).runOnce();
    const v = await everywhere(r.id);
    expect(v).toMatchObject({
      stage: "awaiting_bulk",
      sampleVerdict: "clean",
      bulk: { ready: true, needsOverride: false, needsReason: false },
    });
    expect(v.sampleEvidence).toEqual([expect.objectContaining({ target: source, state: "taken" })]);
    expect(v.pauseReason).toMatch(
      /^Sample done: clean\. None of the 2 sample letters came back within 1 s, and a reader took them/,
    );
    expect(c.got).toEqual(["m-0", "m-1"]);
    await startBulk(users.operator.actor, meta(), { jobId: r.id });
    await worker(r.id).runOnce();
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");
    await waitFor(
      async () => c.got.length,
      (n) => n === 3,
    );
    expect(await auditOf(r.id, "redrive.continue_anyway")).toHaveLength(0);
    await c.stop();
  });

  it("a consumer that rejects the copies (they dead-letter back): returned, with the letters; only an admin continues", async () => {
    const { dlq, source } = await seeded(3);
    const c = await consumer(source, "reject");
    const r = await start(dlq, { watchSeconds: 3 });
    await worker(r.id).runOnce();
    const v = await everywhere(r.id);
    expect(v).toMatchObject({
      stage: "awaiting_bulk",
      sampleVerdict: "returned",
      sampleReturned: 2,
      bulk: { ready: true, needsOverride: true, needsReason: false },
    });
    expect(v.sampleEvidence?.map((e) => e.target)).toEqual([source]);
    expect(v.pauseReason).toBe(
      "Sample returned 2 of 2 letters within 3 s: the fix may not be working. Starting the rest now needs an admin and a reason.",
    );
    const returned = await getRedrive(users.viewer.actor, meta(), { jobId: r.id, state: "returned" });
    expect(returned.ledger.map((l) => l.letterId)).toHaveLength(2);
    // A continue-anyway reason does not stand in for an admin's override.
    await expect(
      startBulk(users.operator.actor, meta(), { jobId: r.id, continueAnywayReason: "it is probably fine" }),
    ).rejects.toMatchObject({ code: "forbidden:redrive:override" });
    await c.stop();
    const go = await startBulk(users.admin.actor, meta(), {
      jobId: r.id,
      overrideReason: "the rejecting consumer was an old replica, now stopped",
    });
    expect(go.stage).toBe("bulk");
    expect(await auditOf(r.id, "redrive.continue_anyway")).toHaveLength(0);
  });

  it("a watch that resumes after a pause judges against the marks taken when the sample's copies were confirmed", async () => {
    const { dlq, source } = await seeded(3);
    const r = await start(dlq, { watchSeconds: 600 });
    const w = worker(r.id);
    let marks: unknown[] = [];
    w.start();
    try {
      const watching = await waitFor(
        () => getDb().redrivePlan.findUniqueOrThrow({ where: { jobId: r.id } }),
        (p) => p.stage === "watching",
      );
      marks = (watching.sampleWatch as { marks: unknown[] }).marks;
      expect(marks).toEqual([expect.objectContaining({ target: source, error: null })]);
      await pauseRedrive(users.operator.actor, meta(), { jobId: r.id });
      await waitFor(
        async () => (await jobStore().get(r.id))?.state,
        (s) => s === "paused",
      );
    } finally {
      await w.stop();
    }
    // Someone starts consuming meanwhile and takes the copies; the watch ends at once on resume.
    const c = await consumer(source, "ack");
    await waitFor(
      async () => c.got.length,
      (n) => n === 2,
    );
    // RabbitMQ's statistics (what the evidence counts acknowledgements from) lag by a few seconds:
    // a watch shorter than that would still see the copies as waiting.
    await waitFor(
      async () =>
        (await (await mgmtRequest("GET", `api/queues/${VHOST}/${encodeURIComponent(source)}`)).json()) as QueueStats,
      (q) => q.messages === 0 && (q.message_stats?.ack ?? 0) >= 2,
    );
    await getDb().redrivePlan.update({ where: { jobId: r.id }, data: { watchUntil: new Date() } });
    await resumeRedrive(users.operator.actor, meta(), { jobId: r.id });
    await worker(r.id).runOnce();
    const plan = await getDb().redrivePlan.findUniqueOrThrow({ where: { jobId: r.id } });
    expect(plan.sampleVerdict).toBe("clean");
    expect(plan.sampleWatch).toEqual({
      marks,
      evidence: [expect.objectContaining({ target: source, state: "taken" })],
    });
    await c.stop();
  });
});

const KAFKA = "local-kafka";

/**
 * A consumer group on a Kafka topic, running before the sample: "ack" processes each record (and
 * commits, as applications do); "reject" fails it and publishes it to the DLT with Spring's headers
 * (the record's own headers kept, markers included), then commits: the copy comes back.
 */
async function kafkaConsumer(topic: string, how: "ack" | "reject", dlt: string) {
  const groupId = `${kafka.prefix}-app-${randomUUID().slice(0, 6)}`;
  kafka.groups.add(groupId);
  const producer = await kafka.getProducer();
  const consumer = kafka.kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  await consumer.connect();
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const got: string[] = [];
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      got.push(String(message.value));
      if (how === "reject")
        await producer.send({
          topic: dlt,
          acks: -1,
          messages: [
            {
              partition,
              key: message.key,
              value: message.value,
              headers: deadLetterHeaders(
                "spring",
                { topic, partition, offset: message.offset, timestamp: message.timestamp, headers: message.headers },
                { exceptionClass: "java.lang.IllegalStateException", message: "still broken" },
                groupId,
              ),
            },
          ],
        });
    },
  });
  await joined;
  const stop = () => consumer.disconnect();
  kafkaConsumers.push(stop);
  return { got, groupId, stop };
}

async function kafkaSeeded(n: number) {
  const { dlt } = await kafka.springDlt(
    Array.from({ length: n }, (_, i) => ({ body: enc(`{"order":${i}}`), key: `k-${i}` })),
  );
  // A fresh topic of the test's own, so that no group of the origin's is counted.
  const target = await kafka.createTopic(kafka.name("target"), 1);
  await scan(KAFKA, dlt);
  return { dlt, target };
}

describe("sample verdict on Kafka", () => {
  it("nobody reads the target topic: the form warns, inconclusive with the evidence; continue anyway moves the rest", async () => {
    const { dlt, target } = await kafkaSeeded(3);
    const plan = { target: { kind: "queue", name: target }, acceptRisk: true };
    const preview = await planRedrive(users.operator.actor, meta(), {
      connectionId: KAFKA,
      queue: dlt,
      selection,
      target: plan.target,
    });
    expect(preview.readers).toEqual([
      expect.objectContaining({
        target,
        readers: expect.objectContaining({ count: 0 }),
        warning: `Nobody consumes topic ${target}: a sample sent there cannot come back, so its verdict will be inconclusive.`,
      }),
    ]);
    const r = await start(dlt, plan, KAFKA);
    await worker(r.id).runOnce();
    const v = await everywhere(r.id);
    expect(v).toMatchObject({ sampleVerdict: "inconclusive", bulk: { ready: true, needsReason: true } });
    expect(v.sampleEvidence).toEqual([expect.objectContaining({ target, state: "no_reader" })]);
    expect(v.pauseReason).toContain(`No consumer group has committed offsets on topic "${target}"`);
    await expect(startBulk(users.operator.actor, meta(), { jobId: r.id })).rejects.toMatchObject({
      code: "bad_request:continue-reason",
    });
    await startBulk(users.operator.actor, meta(), {
      jobId: r.id,
      continueAnywayReason: "the reader is deployed later",
    });
    await worker(r.id).runOnce();
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");
    expect(await auditOf(r.id, "redrive.continue_anyway")).toHaveLength(1);
  }, 120_000);

  it("a consumer group that processes and commits: clean", async () => {
    const { dlt, target } = await kafkaSeeded(3);
    const c = await kafkaConsumer(target, "ack", dlt);
    const preview = await planRedrive(users.operator.actor, meta(), {
      connectionId: KAFKA,
      queue: dlt,
      selection,
      target: { kind: "queue", name: target },
    });
    expect(preview.readers).toEqual([
      expect.objectContaining({ target, warning: null, readers: expect.objectContaining({ count: 1 }) }),
    ]);
    const r = await start(dlt, { target: { kind: "queue", name: target }, acceptRisk: true, watchSeconds: 5 }, KAFKA);
    await worker(r.id).runOnce();
    const v = await everywhere(r.id);
    expect(v).toMatchObject({
      sampleVerdict: "clean",
      bulk: { ready: true, needsOverride: false, needsReason: false },
    });
    expect(v.sampleEvidence).toEqual([expect.objectContaining({ target, state: "taken" })]);
    expect(v.pauseReason).toContain(`Consumer group "${c.groupId}" committed past the sample's copies`);
    expect(c.got).toHaveLength(2);
    await c.stop();
  }, 120_000);

  it("a consumer group that fails the copies into the DLT: returned", async () => {
    const { dlt, target } = await kafkaSeeded(3);
    const c = await kafkaConsumer(target, "reject", dlt);
    const r = await start(dlt, { target: { kind: "queue", name: target }, acceptRisk: true, watchSeconds: 5 }, KAFKA);
    await worker(r.id).runOnce();
    const v = await everywhere(r.id);
    expect(v).toMatchObject({
      sampleVerdict: "returned",
      sampleReturned: 2,
      bulk: { ready: true, needsOverride: true, needsReason: false },
    });
    expect(v.sampleEvidence?.map((e) => e.target)).toEqual([target]);
    await expect(
      startBulk(users.operator.actor, meta(), { jobId: r.id, continueAnywayReason: "it is probably fine" }),
    ).rejects.toMatchObject({ code: "forbidden:redrive:override" });
    await c.stop();
  }, 120_000);
});

const SQS = "local-sqs";

/**
 * A receiver on an SQS queue, polling until stopped: "delete" processes each message (receive,
 * delete); "fail" receives without deleting and lets it show again at once, so the queue's redrive
 * policy moves it back to the DLQ.
 */
function sqsReceiver(url: string, how: "delete" | "fail") {
  let stopped = false;
  let got = 0;
  const loop = (async () => {
    while (!stopped) {
      const { Messages } = await sqs.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          VisibilityTimeout: how === "delete" ? 30 : 0,
        }),
      );
      for (const m of Messages ?? []) {
        got++;
        if (how === "delete")
          await sqs.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
      }
      if (!Messages?.length) await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    got: () => got,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

async function sqsSeeded(n: number) {
  const q = await sqs.dlqByRedrive(Array.from({ length: n }, (_, i) => ({ body: enc(`{"order":${i}}`) })));
  await scan(SQS, q.dlq);
  return q;
}

describe("sample verdict on SQS (ElasticMQ)", () => {
  it("no sign of a receiver on the origin: the form says SQS keeps no list, inconclusive with the evidence", async () => {
    const { dlq, source } = await sqsSeeded(3);
    const preview = await planRedrive(users.operator.actor, meta(), { connectionId: SQS, queue: dlq, selection });
    expect(preview.readers).toEqual([
      expect.objectContaining({ target: source, warning: null, readers: expect.objectContaining({ count: null }) }),
    ]);
    expect(preview.readers[0].readers?.summary).toContain(`SQS keeps no list of receivers for queue "${source}"`);
    const r = await start(dlq, { acceptRisk: true }, SQS);
    await worker(r.id).runOnce();
    const v = await everywhere(r.id);
    expect(v).toMatchObject({ sampleVerdict: "inconclusive", bulk: { ready: true, needsReason: true } });
    expect(v.sampleEvidence).toEqual([expect.objectContaining({ target: source, state: "unknown" })]);
    expect(v.pauseReason).toContain(`No sign of a receiver on queue "${source}"`);
    await startBulk(users.operator.actor, meta(), { jobId: r.id, continueAnywayReason: "workers resume at 02:00" });
    await worker(r.id).runOnce();
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");
  }, 120_000);

  it("a receiver that processes and deletes: clean", async () => {
    const { dlq, source, sourceUrl } = await sqsSeeded(3);
    const rx = sqsReceiver(sourceUrl, "delete");
    try {
      const r = await start(dlq, { acceptRisk: true, watchSeconds: 2 }, SQS);
      await worker(r.id).runOnce();
      const v = await everywhere(r.id);
      expect(v).toMatchObject({ sampleVerdict: "clean", bulk: { ready: true, needsReason: false } });
      expect(v.sampleEvidence).toEqual([expect.objectContaining({ target: source, state: "taken" })]);
      expect(rx.got()).toBe(2);
    } finally {
      await rx.stop();
    }
  }, 120_000);

  it("a receiver that fails them (the redrive policy moves them back): returned", async () => {
    const { dlq, sourceUrl } = await sqsSeeded(3);
    const rx = sqsReceiver(sourceUrl, "fail");
    try {
      const r = await start(dlq, { acceptRisk: true, watchSeconds: 3 }, SQS);
      await worker(r.id).runOnce();
      const v = await everywhere(r.id);
      expect(v).toMatchObject({ sampleVerdict: "returned", sampleReturned: 2, bulk: { needsOverride: true } });
    } finally {
      await rx.stop();
    }
  }, 120_000);
});

const PULSAR = "local-pulsar";

/**
 * A Shared consumer on the application's subscription of a Pulsar topic, running until stopped:
 * "ack" processes each message; "reject" nacks it until Pulsar's dead-letter policy (the client's,
 * through the WebSocket proxy) publishes it to `dlq`: the copy comes back.
 */
async function pulsarConsumer(t: TopicName, how: "ack" | "reject", dlq: TopicName) {
  const dlqFull = `persistent://${dlq.tenant}/${dlq.namespace}/${dlq.topic}`;
  const policy =
    how === "reject"
      ? `&deadLetterTopic=${encodeURIComponent(dlqFull)}&maxRedeliverCount=1&negativeAckRedeliveryDelay=50`
      : "";
  const socket = await PulsarSocket.open(
    pulsar.ep,
    `consumer/persistent/${topicPath(t)}/${APP_SUBSCRIPTION}?subscriptionType=Shared&receiverQueueSize=10${policy}`,
    "consume in a test",
  );
  let stop = false;
  let got = 0;
  const loop = (async () => {
    while (!stop) {
      const f = await socket.next(200);
      if (!f || typeof f.messageId !== "string") continue;
      got++;
      if (how === "ack") socket.send({ messageId: f.messageId });
      else socket.send({ type: "negativeAcknowledge", messageId: f.messageId });
    }
  })();
  return {
    got: () => got,
    stop: async () => {
      stop = true;
      await loop;
      await socket.close().catch(() => undefined);
    },
  };
}

async function pulsarSeeded(n: number) {
  const { source, dlq } = await dlqOf(
    pulsar,
    Array.from({ length: n }, (_, i) => ({ body: enc(`{"order":${i}}`), messageId: `p-${i}` })),
  );
  await scan(PULSAR, shortName(dlq));
  return { source, dlq, sourceName: shortName(source), dlqName: shortName(dlq) };
}

describe("sample verdict on Pulsar", () => {
  it("the origin's subscription has no consumer connected: inconclusive with the evidence", async () => {
    const { dlqName, sourceName } = await pulsarSeeded(3);
    const preview = await planRedrive(users.operator.actor, meta(), {
      connectionId: PULSAR,
      queue: dlqName,
      selection,
    });
    expect(preview.readers).toEqual([
      expect.objectContaining({ target: sourceName, readers: expect.objectContaining({ count: 1 }) }),
    ]);
    const r = await start(dlqName, { acceptRisk: true }, PULSAR);
    await worker(r.id).runOnce();
    const v = await everywhere(r.id);
    expect(v).toMatchObject({ sampleVerdict: "inconclusive", bulk: { ready: true, needsReason: true } });
    expect(v.sampleEvidence).toEqual([expect.objectContaining({ target: sourceName, state: "no_reader" })]);
    expect(v.pauseReason).toContain("No consumer is connected");
    await startBulk(users.operator.actor, meta(), {
      jobId: r.id,
      continueAnywayReason: "the service restarts at 02:00",
    });
    await worker(r.id).runOnce();
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");
  }, 120_000);

  it("a consumer that processes and acknowledges: clean", async () => {
    const { source, dlq, dlqName, sourceName } = await pulsarSeeded(3);
    const c = await pulsarConsumer(source, "ack", dlq);
    try {
      const r = await start(dlqName, { acceptRisk: true, watchSeconds: 3 }, PULSAR);
      await worker(r.id).runOnce();
      const v = await everywhere(r.id);
      expect(v).toMatchObject({ sampleVerdict: "clean", bulk: { ready: true, needsReason: false } });
      expect(v.sampleEvidence).toEqual([expect.objectContaining({ target: sourceName, state: "taken" })]);
      expect(c.got()).toBe(2);
    } finally {
      await c.stop();
    }
  }, 120_000);

  it("a consumer that fails them into the DLQ (its dead-letter policy): returned", async () => {
    const { source, dlq, dlqName } = await pulsarSeeded(3);
    const c = await pulsarConsumer(source, "reject", dlq);
    try {
      const r = await start(dlqName, { acceptRisk: true, watchSeconds: 4 }, PULSAR);
      await worker(r.id).runOnce();
      const v = await everywhere(r.id);
      expect(v).toMatchObject({ sampleVerdict: "returned", sampleReturned: 2, bulk: { needsOverride: true } });
    } finally {
      await c.stop();
    }
  }, 120_000);
});
