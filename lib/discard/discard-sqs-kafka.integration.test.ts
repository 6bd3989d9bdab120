import { randomUUID } from "node:crypto";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restoreArchived } from "@/lib/discard/undo";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { KafkaKit } from "@/lib/brokers/kafka/test-kit";
import { ELASTICMQ_ENDPOINT, SqsKit } from "@/lib/brokers/sqs/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { discardHandler } from "./handler";
import { getDiscard, planDiscard, startDiscard } from "./use-cases";

/**
 * Discard and undo on SQS (ElasticMQ: letters dead-lettered by its redrive policy) and Kafka (a
 * Spring-style DLT; "removal" records the offset as handled, outcome discarded), through the use
 * cases and the job worker, against the real brokers and Postgres.
 */
const meta = () => ({ requestId: `dk-${randomUUID()}`, ip: "127.0.0.1" });
const sqsKit = new SqsKit(ELASTICMQ_ENDPOINT);
const kafkaKit = new KafkaKit();
let admin: Actor;
const text = (s: string) => new TextEncoder().encode(s);

beforeAll(async () => {
  const u = await createUser({
    email: `admin-${randomUUID().slice(0, 8)}@discard-brokers.test`,
    role: "admin",
    password: "a-long-enough-password",
  });
  admin = { id: u.id, email: u.email, name: null, role: "admin" };
  await getDb().$executeRawUnsafe(
    `UPDATE jobs SET state = 'cancelled', lease_owner = NULL WHERE kind = 'discard' AND state IN ('queued', 'running', 'cancelling', 'paused')`,
  );
});
afterAll(async () => {
  await sqsKit.cleanup();
  await kafkaKit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

async function scan(connectionId: string, queue: string) {
  const kind = `scan-dk-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({ kind: kind as "scan", connectionId, queue, params: { acceptRisk: true } });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 30_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

/** Discards the letters whose index rows match `pick` (by position in index order); returns the job and the archive ids. */
async function discard(connectionId: string, queue: string, letterIds: string[]) {
  const selection = { kind: "letters", letterIds };
  const preview = await planDiscard(admin, meta(), { connectionId, queue, selection });
  expect(preview.count).toBe(letterIds.length);
  const job = await startDiscard(admin, meta(), {
    connectionId,
    queue,
    selection,
    reason: "broker discard test",
    confirmedCount: letterIds.length,
    acceptRisk: true,
  });
  await new JobWorker({
    handlers: { discard: discardHandler() },
    owner: `dk-${randomUUID().slice(0, 6)}`,
    leaseMs: 30_000,
    scope: { jobIds: [job.id] },
  }).runOnce();
  const v = await getDiscard(admin, meta(), { jobId: job.id });
  expect(v.discard.state).toBe("succeeded");
  expect(v.counts.discarded).toBe(letterIds.length);
  const rows = await getDb().$queryRawUnsafe<Array<{ id: string; letter_id: string }>>(
    `SELECT id::text AS id, letter_id FROM archived_letters WHERE discard_job_id = $1::uuid ORDER BY letter_id`,
    job.id,
  );
  return { job, rows };
}

const indexed = (connectionId: string, queue: string) =>
  getDb().$queryRawUnsafe<Array<{ letter_id: string }>>(
    `SELECT letter_id FROM triage_letters WHERE connection_id = $1 AND queue = $2 ORDER BY kafka_partition NULLS FIRST, kafka_offset NULLS FIRST, position, id`,
    connectionId,
    queue,
  );

describe("discard on SQS (ElasticMQ)", () => {
  it("removes only the chosen letters after archiving them; undo sends a byte-identical copy back", async () => {
    const bodies = Array.from({ length: 5 }, (_, i) => `{"sqs":${i},"n":"${randomUUID()}"}`);
    const { dlq, dlqUrl } = await sqsKit.dlqByRedrive(bodies.map((b) => ({ body: text(b) })));
    await scan("local-sqs", dlq);
    const ids = (await indexed("local-sqs", dlq)).map((r) => r.letter_id);
    expect(ids).toHaveLength(5);
    const { rows } = await discard("local-sqs", dlq, ids.slice(0, 2));
    expect(rows).toHaveLength(2);
    expect(await sqsKit.depth(dlqUrl)).toBe(3);

    const r = await restoreArchived(admin, meta(), { ids: rows.map((x) => x.id), reason: "sqs undo test" });
    expect(r).toMatchObject({ restored: 2, failed: 0 });
    const got: string[] = [];
    for (let i = 0; i < 20 && got.length < 5; i++) {
      const { Messages } = await sqsKit.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
      );
      for (const m of Messages ?? []) got.push(m.Body ?? "");
    }
    expect(got.sort()).toEqual([...bodies].sort());
  }, 120_000);
});

describe("discard on Kafka", () => {
  it("marks the chosen offsets handled (discarded) under the operation; undo clears the mark, the same record again", async () => {
    const { dlt } = await kafkaKit.springDlt(["a", "b", "c", "d"].map((key, i) => ({ body: text(`kafka-${i}`), key })));
    await scan("local-kafka", dlt);
    const ids = (await indexed("local-kafka", dlt)).map((r) => r.letter_id);
    expect(ids).toHaveLength(4);
    // A record the console already redrove stays in the log, marked handled: it is not offered for discard.
    const all = { connectionId: "local-kafka", queue: dlt, selection: { kind: "filter", filter: {} } };
    expect((await planDiscard(admin, meta(), all)).count).toBe(4);
    await getDb().$executeRawUnsafe(
      `UPDATE triage_letters SET handled_outcome = 'redriven' WHERE connection_id = 'local-kafka' AND queue = $1 AND letter_id = $2`,
      dlt,
      ids[3],
    );
    expect((await planDiscard(admin, meta(), all)).count).toBe(3);
    const { job, rows } = await discard("local-kafka", dlt, [ids[1], ids[2]]);
    const marks = await getDb().$queryRawUnsafe<Array<{ offset: string; outcome: string; operation_id: string }>>(
      `SELECT "offset"::text AS offset, outcome::text AS outcome, operation_id::text AS operation_id FROM kafka_handled_offsets WHERE connection_id = 'local-kafka' AND topic = $1 ORDER BY "offset"`,
      dlt,
    );
    expect(marks.map((m) => [m.offset, m.outcome, m.operation_id])).toEqual([
      ["1", "discarded", job.id],
      ["2", "discarded", job.id],
    ]);
    const r = await restoreArchived(admin, meta(), { ids: rows.map((x) => x.id), reason: "kafka undo test" });
    expect(r).toMatchObject({ restored: 2, failed: 0 });
    expect(r.outcomes.map((o) => o.newLetterId).sort()).toEqual([ids[1], ids[2]].sort());
    const after = await getDb().$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM kafka_handled_offsets WHERE connection_id = 'local-kafka' AND topic = $1`,
      dlt,
    );
    expect(after[0].n).toBe(0);
  }, 120_000);
});
