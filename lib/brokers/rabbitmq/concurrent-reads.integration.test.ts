import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import { collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import type { Letter } from "@/lib/brokers/contract/letter";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { readLockName } from "@/lib/brokers/rabbitmq/read-lock";
import { AMQP_URL, RabbitKit, mgmtRequest, testConfig, VHOST } from "@/lib/brokers/rabbitmq/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const kit = new RabbitKit();
/** Three consoles (replicas) on their own connections, as in a deployment behind a load balancer. */
const replicas = [0, 1, 2].map(
  () => new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500, busyWaitMs: 30_000 }),
);

afterAll(async () => {
  for (const a of replicas) await a.close();
  await kit.cleanup();
});

const letters = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ body: new TextEncoder().encode(`{"order":${i}}`), messageId: `order-${i}` }));

describe("rabbitmq: reads of one DLQ at the same time", () => {
  it("every read sees every letter: none is called gone while another read holds it", async () => {
    const { dlq } = await kit.dlqByReject(letters(12));
    const first = (await replicas[0].browse(dlq, { offset: 0, limit: 1 })).letters[0];
    const last = (await replicas[0].browse(dlq, { offset: 11, limit: 1 })).letters[0];
    const short: string[] = [];
    for (let round = 0; round < 15; round++) {
      await Promise.all(
        replicas.flatMap((a, r) => [
          a.browse(dlq, { offset: 0, limit: 50 }).then((p) => {
            if (p.letters.length !== 12 || p.depth !== 12)
              short.push(`round ${round}, replica ${r}: browse saw ${p.letters.length} letters, depth ${p.depth}`);
          }),
          a.getLetter(dlq, first.id).then((l) => {
            if (l?.id !== first.id) short.push(`round ${round}, replica ${r}: the first letter was not found`);
          }),
          a.getLetter(dlq, last.id).then((l) => {
            if (l?.id !== last.id) short.push(`round ${round}, replica ${r}: the last letter was not found`);
          }),
        ]),
      );
    }
    expect(short).toEqual([]);
    expect(await kit.depth(dlq)).toBe(12);
  }, 120_000);

  it("a move while other consoles browse finds every letter it asks for: none is reported missing", async () => {
    const { dlq } = await kit.dlqByReject(letters(12));
    const target = await kit.queue(kit.name("target"));
    const all = (await replicas[0].browse(dlq, { offset: 0, limit: 50 })).letters;
    const job = randomUUID();
    let moving = true;
    const seen: string[] = [];
    const browsing = replicas.slice(1).map(async (a, r) => {
      while (moving) {
        const p = await a.browse(dlq, { offset: 0, limit: 50 });
        // A browse sees the DLQ before or after a move, never with letters another read holds.
        if (p.letters.length !== p.depth)
          seen.push(`replica ${r + 1}: ${p.letters.length} letters of depth ${p.depth}`);
        if (p.letters.some((l, i) => l.id !== all[all.length - p.letters.length + i].id))
          seen.push(`replica ${r + 1}: not the DLQ's tail: ${p.letters.map((l) => l.id).join(", ")}`);
      }
    });
    const outcomes: string[] = [];
    try {
      for (const l of all) {
        const [res] = await collectMoves(
          replicas[0].moveLetters(dlq, [
            {
              letterId: l.id,
              sha256: l.sha256,
              target: { kind: "queue", name: target },
              markers: markersFor(job, 1, l.messageId),
            },
          ]),
        );
        outcomes.push(`${l.id}: ${res.outcome}${res.reason ? ` (${res.reason})` : ""}`);
      }
    } finally {
      moving = false;
      await Promise.all(browsing);
    }
    expect(outcomes).toEqual(all.map((l) => `${l.id}: moved`));
    expect(seen).toEqual([]);
    expect(await kit.depth(dlq)).toBe(0);
    expect(await kit.depth(target)).toBe(12);
  }, 120_000);

  it("the mover keeps its lock for a moment after a call, for its next call; pages keep nothing", async () => {
    const { dlq } = await kit.dlqByReject(letters(3));
    const target = await kit.queue(kit.name("target"));
    // A grace long enough that a loaded machine cannot outlast it between two lines of this test.
    const mover = new RabbitMqAdapter(testConfig(), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 500,
      moverLockGraceMs: 3_000,
    });
    const [first, second] = (await mover.browse(dlq, { offset: 0, limit: 50 })).letters;
    const conn = await amqp.connect(AMQP_URL);
    /** What another connection is told about the lock queue: 405 while a console holds it, 404 once it is gone. */
    const lockState = async () => {
      const ch = await conn.createChannel();
      ch.on("error", () => undefined);
      try {
        await ch.checkQueue(readLockName(dlq));
        return "ours";
      } catch (e) {
        return (e as { code?: number }).code;
      }
    };
    const move = async (l: Letter) =>
      collectMoves(
        mover.moveLetters(dlq, [
          {
            letterId: l.id,
            sha256: l.sha256,
            target: { kind: "queue", name: target },
            markers: markersFor(randomUUID(), 1, l.messageId),
          },
        ]),
      );
    try {
      expect(await lockState()).toBe(404); // the browse kept nothing
      expect((await move(first))[0].outcome).toBe("moved");
      expect(await lockState()).toBe(405); // kept for the next call
      expect((await move(second))[0].outcome).toBe("moved");
      await new Promise((r) => setTimeout(r, 3_500));
      expect(await lockState()).toBe(404);
    } finally {
      await conn.close();
      await mover.close();
    }
  }, 60_000);

  it("a read waits while another console holds the DLQ, then sees every letter; past busyWaitMs it is refused as busy, not short", async () => {
    const { dlq } = await kit.dlqByReject(letters(6));
    const last = (await replicas[0].browse(dlq, { offset: 5, limit: 1 })).letters[0];
    const impatient = new RabbitMqAdapter(testConfig(), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 500,
      busyWaitMs: 300,
    });
    const holder = replicas[0].stream(dlq)[Symbol.asyncIterator]();
    try {
      // The holder has read its first letter and holds the rest of its window, unacked.
      expect((await holder.next()).done).toBe(false);
      // Its consumer is the console's, here and seen from another replica: not a stranger's.
      for (const a of [replicas[0], replicas[1]]) {
        const summary = await a.describeDlq(dlq);
        expect(summary.warnings.map((w) => w.code)).toEqual(["console_reading"]);
        expect(summary.consumers).toBe(0);
      }
      await expect(impatient.getLetter(dlq, last.id)).rejects.toMatchObject({
        kind: "throttled",
        userMessage: expect.stringContaining("is being read right now"),
      });
      let found: Letter | null | undefined;
      const waiting = replicas[1].getLetter(dlq, last.id).then((l) => (found = l));
      await new Promise((r) => setTimeout(r, 700));
      expect(found).toBeUndefined();
      await holder.return?.(undefined);
      await waiting;
      expect(found?.id).toBe(last.id);
    } finally {
      await holder.return?.(undefined);
      await impatient.close();
    }
  }, 60_000);

  it("a page on another replica gets its turn between a job's calls, and the job goes on after it", async () => {
    const { dlq } = await kit.dlqByReject(letters(20));
    const target = await kit.queue(kit.name("target"));
    const all = (await replicas[0].browse(dlq, { offset: 0, limit: 50 })).letters;
    const page = new RabbitMqAdapter(testConfig(), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 500,
      busyWaitMs: 5_000,
    });
    // A job's calls back to back on replica 0, each reading the whole DLQ and moving nothing (the
    // checksum it asks for is not the letter's): the DLQ stays as it is, and replica 0 keeps its
    // lock from one call to the next, as an unthrottled redrive does.
    let calls = 0;
    let stop = false;
    const outcomes = new Set<string>();
    const job = (async () => {
      while (!stop) {
        const [res] = await collectMoves(
          replicas[0].moveLetters(dlq, [
            {
              letterId: all[0].id,
              sha256: "0".repeat(64),
              target: { kind: "queue", name: target },
              markers: markersFor(randomUUID(), 1, all[0].messageId),
            },
          ]),
        );
        outcomes.add(res.outcome);
        calls++;
      }
    })();
    try {
      while (calls < 3) await new Promise((r) => setTimeout(r, 20));
      const before = calls;
      // Before turns, this read waited out its busyWaitMs behind the job and was refused as busy.
      const found = await page.getLetter(dlq, all[19].id);
      expect(found?.id).toBe(all[19].id);
      const after = calls;
      while (calls < after + 3) await new Promise((r) => setTimeout(r, 20));
      expect(calls).toBeGreaterThan(before);
    } finally {
      stop = true;
      await job;
      await page.close();
    }
    expect([...outcomes]).toEqual(["checksum_mismatch"]);
    expect(await kit.depth(dlq)).toBe(20);
    expect(await kit.depth(target)).toBe(0);
  }, 60_000);

  it("a consumer that is not the console's is still called one", async () => {
    const { dlq } = await kit.dlqByReject(letters(2));
    const conn = await amqp.connect(AMQP_URL);
    try {
      const ch = await conn.createChannel();
      await ch.prefetch(1);
      await ch.consume(dlq, () => undefined, { noAck: false });
      const summary = await replicas[0].describeDlq(dlq);
      expect(summary.consumers).toBe(1);
      expect(summary.warnings.map((w) => w.code)).toEqual(["consumers_attached"]);
    } finally {
      await conn.close();
    }
  }, 60_000);

  it("a console that dies in the middle of a read frees the DLQ for the others at once", async () => {
    const { dlq } = await kit.dlqByReject(letters(6));
    const doomed = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
    const holder = doomed.stream(dlq)[Symbol.asyncIterator]();
    expect((await holder.next()).done).toBe(false);
    // Its connection goes (a crash, a network cut): RabbitMQ returns its letters and drops its lock queue.
    await doomed.close();
    expect((await replicas[2].describeDlq(dlq)).warnings).toEqual([]);
    const started = Date.now();
    const page = await replicas[2].browse(dlq, { offset: 0, limit: 50 });
    expect(page.letters).toHaveLength(6);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 60_000);

  it("a user that may not declare the lock queue still reads, and the DLQ says reads are not kept apart", async () => {
    const { dlq } = await kit.dlqByReject(letters(3));
    const user = `${kit.prefix}-reader`;
    expect((await mgmtRequest("PUT", `api/users/${user}`, { password: "reader-pw", tags: "" })).ok).toBe(true);
    // Read and write everything, configure nothing: the lock queue cannot be declared.
    expect(
      (await mgmtRequest("PUT", `api/permissions/${VHOST}/${user}`, { configure: "^$", write: ".*", read: ".*" })).ok,
    ).toBe(true);
    process.env.DLQ_TEST_READER_USER = user;
    process.env.DLQ_TEST_READER_PASSWORD = "reader-pw";
    const restricted = new RabbitMqAdapter(
      testConfig({ usernameEnv: "DLQ_TEST_READER_USER", passwordEnv: "DLQ_TEST_READER_PASSWORD" }),
      { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 },
    );
    try {
      expect((await restricted.describeDlq(dlq)).warnings.map((w) => w.code)).not.toContain("read_lock_refused");
      expect((await restricted.browse(dlq, { offset: 0, limit: 50 })).letters).toHaveLength(3);
      const warning = (await restricted.describeDlq(dlq)).warnings.find((w) => w.code === "read_lock_refused");
      expect(warning?.message).toContain(`dlq-console.read-lock.${dlq}`);
      expect(warning?.message).toContain("configure permission");
    } finally {
      await restricted.close();
      await mgmtRequest("DELETE", `api/users/${user}`);
    }
  }, 60_000);
});
