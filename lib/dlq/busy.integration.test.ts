import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { closeAllAdapters } from "@/lib/connections/registry";
import { isResourceLocked } from "@/lib/brokers/rabbitmq/connection";
import { readLockName } from "@/lib/brokers/rabbitmq/read-lock";
import { AMQP_URL, RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { openDlq } from "./open-dlq";
import { viewLetter } from "./view-letter";

/**
 * A RabbitMQ DLQ another console read holds (its read lock, declared on a connection of this
 * test's own, as another console's read declares it): the page waits its turn, then says the queue
 * is being read, and by which of this console's jobs, never that the broker is unreachable; once
 * the read ends, every letter is there.
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => Buffer.from(s, "utf8");
const kit = new RabbitKit();
let operator: Actor;
let dlq: string;
const meta = (): RequestMeta => ({ requestId: `busy-${randomUUID()}`, ip: "127.0.0.1" });

beforeAll(async () => {
  const u = await createUser({
    email: `op-${randomUUID().slice(0, 8)}@busy.test`,
    role: "operator",
    password: "operator-password-long-enough",
  });
  operator = { id: u.id, email: u.email, name: u.name, role: "operator" };
  ({ dlq } = await kit.dlqByReject([1, 2, 3].map((i) => ({ body: enc(`{"order":${i}}`), messageId: `busy-${i}` }))));
});
afterAll(async () => {
  await kit.cleanup();
  await closeAllAdapters();
});

/**
 * Holds the DLQ's read lock, as another console's read does, until the returned function is called.
 * It waits its turn as such a read would: run by hand in vhost `/`, a console on the defaults may be
 * indexing the DLQ and hold the lock for a moment (scripts/test.sh gives the tests their own vhost).
 */
async function holdReadLock(queue: string): Promise<() => Promise<void>> {
  const conn = await amqp.connect(AMQP_URL);
  conn.on("error", () => undefined);
  for (let attempt = 0; ; attempt++) {
    const ch = await conn.createChannel();
    ch.on("error", () => undefined); // a refused declaration closes its channel
    try {
      await ch.assertQueue(readLockName(queue), {
        exclusive: true,
        durable: false,
        autoDelete: false,
        arguments: { "x-queue-type": "classic" },
      });
      return () => conn.close();
    } catch (e) {
      if (!isResourceLocked(e) || attempt >= 300) {
        await conn.close().catch(() => undefined);
        throw e;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The rejection of `p`, or null when it resolves. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as { code: string; userMessage: string; details?: Record<string, unknown> },
  );

describe("a page behind another read of a RabbitMQ DLQ", () => {
  it("names the console's scan reading the queue, says at once that it did not wait for it, and reads every letter once it ended", async () => {
    const before = await openDlq(operator, meta(), { connectionId: CONN, queue: dlq, page: 1, pageSize: 50 });
    const letterId = before.letters![0].id;
    const release = await holdReadLock(dlq);
    const job = await jobStore().enqueue({ kind: "scan", connectionId: CONN, queue: dlq, createdBy: operator.id });
    const started = new Date(Date.now() - 42_000);
    await getDb().job.update({
      where: { id: job.id },
      data: { state: "running", startedAt: started, progress: { read: 2, total: 3 } },
    });
    try {
      const err = await refusal(openDlq(operator, meta(), { connectionId: CONN, queue: dlq, page: 1, pageSize: 50 }));
      // A scan holds the queue to its last letter: the page gives its turn up rather than wait it out.
      expect(err).toMatchObject({ code: "unavailable:queue-busy", details: { waited: false } });
      const words = (err as { userMessage: string }).userMessage;
      expect(words).toContain(`Queue "${dlq}" is being read by a triage scan (started `);
      expect(words).toContain("2 of 3 letters read");
      expect(words).toContain("so this page did not wait for its turn; nothing was read or changed");
      expect(words).not.toMatch(/unreachable/i);
      // A letter's page gives its turn up the same way, and says the same.
      const letterErr = await refusal(viewLetter(operator, meta(), { connectionId: CONN, queue: dlq, letterId }));
      expect(letterErr).toMatchObject({ code: "unavailable:queue-busy", details: { waited: false } });
      expect(letterErr?.userMessage).toContain("is being read by a triage scan");
    } finally {
      await getDb().job.update({ where: { id: job.id }, data: { state: "cancelled", finishedAt: new Date() } });
      await release();
    }
    const page = await openDlq(operator, meta(), { connectionId: CONN, queue: dlq, page: 1, pageSize: 50 });
    expect(page.letters?.map((l) => l.messageId)).toEqual(["busy-1", "busy-2", "busy-3"]);
    expect(await kit.depth(dlq)).toBe(3);
  });

  it("behind a redrive (its mover lets a waiting read in between calls) the page waits its turn, and says so if refused", async () => {
    const release = await holdReadLock(dlq);
    const job = await jobStore().enqueue({ kind: "redrive", connectionId: CONN, queue: dlq, createdBy: operator.id });
    await getDb().job.update({ where: { id: job.id }, data: { state: "running", startedAt: new Date() } });
    try {
      const err = await refusal(openDlq(operator, meta(), { connectionId: CONN, queue: dlq, page: 1, pageSize: 50 }));
      expect(err).toMatchObject({ code: "unavailable:queue-busy", details: { waited: true } });
      expect(err?.userMessage).toContain(`Queue "${dlq}" is being read by a redrive (started `);
      expect(err?.userMessage).toContain("so this page waited for its turn and was refused");
    } finally {
      await getDb().job.update({ where: { id: job.id }, data: { state: "cancelled", finishedAt: new Date() } });
      await release();
    }
  });

  it("says none of this console's jobs reads it when another console's read holds it", async () => {
    const release = await holdReadLock(dlq);
    try {
      const err = await refusal(openDlq(operator, meta(), { connectionId: CONN, queue: dlq, page: 1, pageSize: 50 }));
      expect(err).toMatchObject({ code: "unavailable:queue-busy", details: { waited: true } });
      expect((err as { userMessage: string }).userMessage).toContain(
        "by another page, job or replica of the console (none of this console's jobs is reading it)",
      );
    } finally {
      await release();
    }
  });
});
