import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { collect, collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { moveWords } from "@/lib/brokers/move-rules";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { peek } from "@/lib/brokers/rabbitmq/contract-fixture";
import { AMQP_URL, RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { Letter, LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveRequest } from "@/lib/brokers/contract/move";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { redriveHandler, type RedriveDeps } from "@/lib/redrive/handler";
import { getRedrive, planRedrive, startBulk, startRedrive } from "@/lib/redrive/use-cases";
import { scanHandler } from "@/lib/triage/scan";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * Twin letters on a real RabbitMQ: letters without a message id whose body and headers
 * are identical have no identity of their own. They are listed `k-X`, `k-X~2` by their order, and
 * once one leaves, the other is listed `k-X`. A request for either is answered by any of them still
 * in the DLQ, in every operation, and "missing" only when none is left after the DLQ was looked at.
 * The letters are dead-lettered for real (rejected from a work queue).
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => Buffer.from(b).toString("utf8");
const meta = () => ({ requestId: `tw-${randomUUID()}`, ip: "127.0.0.1" });
const FAST: Partial<RedriveDeps> = { returnCheckMs: 300, verifyGraceMs: 1000 };
const TWIN = '{"event":"order.paid","order":42}';
const OTHER = '{"event":"order.paid","order":43}';
const actors = {} as Record<"operator" | "admin", Actor>;
const kit = new RabbitKit();
const adapter = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });

beforeAll(async () => {
  for (const role of ["operator", "admin"] as const) {
    const u = await createUser({
      email: `${role}-${randomUUID().slice(0, 8)}@twins.test`,
      role,
      password: "a-long-enough-password",
    });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
});
afterAll(async () => {
  await adapter.close();
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

/** A DLQ holding two identical letters without message ids (same body, same headers), then a third. */
async function twinDlq(): Promise<{ dlq: string; source: string }> {
  const twin = () => ({ body: enc(TWIN), headers: { "x-exception-class": "java.net.SocketTimeoutException" } });
  return kit.dlqByReject([twin(), twin(), { ...twin(), body: enc(OTHER) }]);
}

/**
 * Takes the first letter with this body out of `dlq` as another consumer would (basic.get in queue
 * order, ack); the letters got before it go back to their places when the channel closes.
 */
async function takeAway(dlq: string, l: Letter): Promise<boolean> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    for (;;) {
      const m = await ch.get(dlq, { noAck: false });
      if (!m) return false;
      if (m.content.equals(Buffer.from(l.body))) {
        ch.ack(m);
        await ch.close(); // the ack is applied and the others requeued in place
        return true;
      }
    }
  } finally {
    await conn.close().catch(() => undefined);
  }
}

const browseAll = async (dlq: string) => (await adapter.browse(dlq, { offset: 0, limit: 100 })).letters;

/** The three letters as browse lists them: the two twins (`k-X`, `k-X~2`) and the other one. */
async function listed(dlq: string): Promise<{ first: Letter; second: Letter; other: Letter }> {
  const ls = await browseAll(dlq);
  expect(ls.map((l) => text(l.body))).toEqual([TWIN, TWIN, OTHER]);
  const [first, second, other] = ls;
  expect(first.messageId).toBeNull();
  expect(first.id).toMatch(/^k-[A-Za-z0-9_-]+$/);
  expect(second.id).toBe(`${first.id}~2`);
  expect(first.sha256).toBe(second.sha256);
  expect(other.id).not.toContain("~");
  return { first, second, other };
}

const moveReq = (l: Letter, target: string, job = randomUUID()): MoveRequest => ({
  letterId: l.id,
  sha256: l.sha256,
  target: { kind: "queue", name: target },
  markers: markersFor(job, 1, null),
});

describe("twins through the redrive engine (the registry's RabbitMQ connection)", () => {
  async function scan(queue: string) {
    const kind = `scan-tw-${randomUUID().slice(0, 8)}`;
    const job = await jobStore().enqueue({
      kind: kind as "scan",
      connectionId: CONN,
      queue,
      params: { acceptRisk: true },
    });
    await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 10_000 }).runOnce();
    expect((await jobStore().get(job.id))?.state).toBe("succeeded");
  }

  /** A worker that runs only this job. */
  const worker = (jobId: string) =>
    new JobWorker({
      handlers: { redrive: redriveHandler(FAST) },
      owner: `tw-${randomUUID().slice(0, 6)}`,
      leaseMs: 10_000,
      pollMs: 50,
      scope: { jobIds: [jobId] },
    });

  /** Every letter of the DLQ to its origin: the first one as the sample, then the rest. */
  async function sampleOne(dlq: string) {
    const selection = { kind: "filter", filter: {} };
    const preview = await planRedrive(actors.operator, meta(), { connectionId: CONN, queue: dlq, selection });
    expect(preview.count).toBe(3);
    const r = await startRedrive(actors.operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      fix: "Deployed payments 1.4.2 (idempotent order.paid)",
      confirmedCount: preview.count,
      watchSeconds: 1,
      rate: 50,
      sample: { count: 1 },
    });
    await worker(r.id).runOnce(); // the sample, its watch, and the pause with the verdict
    const v = (await getRedrive(actors.operator, meta(), { jobId: r.id })).redrive;
    expect(v).toMatchObject({ state: "paused", stage: "awaiting_bulk" });
    return { jobId: r.id, verdict: v.sampleVerdict };
  }

  /**
   * Starts the rest as an operator would after the sample's verdict (nobody consumes the origin
   * here, so the sample is not shown clean: the operator continues anyway, with a reason).
   */
  async function rest(jobId: string, verdict: string | null) {
    if (verdict === "clean") await startBulk(actors.operator, meta(), { jobId });
    else if (verdict === "returned")
      await startBulk(actors.admin, meta(), { jobId, overrideReason: "Nothing consumes the origin in this test" });
    else
      await startBulk(actors.operator, meta(), {
        jobId,
        continueAnywayReason: "Nothing consumes the origin in this test",
      });
    await worker(jobId).runOnce();
    return (await getRedrive(actors.operator, meta(), { jobId })).redrive;
  }

  const ledger = (jobId: string) => getDb().redriveLetter.findMany({ where: { jobId }, orderBy: { seq: "asc" } });

  it("sample one twin, then the rest: 3 moved, 0 missing, the DLQ empty; the job and its audit say so", async () => {
    const { dlq, source } = await twinDlq();
    const { first, second, other } = await listed(dlq);
    await scan(dlq);
    const { jobId, verdict } = await sampleOne(dlq);
    const rows = await ledger(jobId);
    expect(rows.map((x) => x.letterId)).toEqual([first.id, second.id, other.id]);
    expect(rows.map((x) => x.state)).toEqual(["moved", "pending", "pending"]);
    expect(rows[0].stage).toBe("sample");
    // The twin left is now listed under the first id: the request for `~2` is still answered by it.
    expect((await browseAll(dlq)).map((l) => l.id)).toEqual([first.id, other.id]);

    const v = await rest(jobId, verdict);
    expect(v.state).toBe("succeeded");
    expect(v.progress).toMatchObject({ redriven: 3, missing: 0, failed: 0, pending: 0 });
    expect(v.progress).toMatchObject({ result: { complete: true, left: 0, summary: "3 moved" } });
    expect((await ledger(jobId)).map((x) => x.state)).toEqual(["moved", "moved", "moved"]);
    expect(await kit.depth(dlq)).toBe(0);
    const arrived = await peek(source);
    expect(arrived.map((m) => m.content.toString()).sort()).toEqual([TWIN, TWIN, OTHER].sort());
    for (const m of arrived) expect(m.properties.headers?.[REDRIVE_HEADERS.redriveId]).toBe(jobId);

    const audit = await getDb().auditEvent.findMany({ where: { operationId: jobId } });
    const letters = audit.filter((a) => a.scope === "letter" && a.action === "letter.redrive");
    expect(letters.map((a) => a.outcome)).toEqual(["success", "success", "success"]);
    const finished = audit.find((a) => a.action === "redrive.finished")!;
    expect(finished.outcome).toBe("success");
    expect(finished.details).toMatchObject({ state: "succeeded", summary: "3 moved" });
  });

  it("a twin taken by someone else between the sample and the rest: exactly 1 missing, found so only by the final look; the others moved", async () => {
    const { dlq, source } = await twinDlq();
    const { first, second, other } = await listed(dlq);
    await scan(dlq);
    const { jobId, verdict } = await sampleOne(dlq);
    // Another consumer takes the twin that was left (listed `k-X` by now).
    const [left] = await browseAll(dlq);
    expect(left.id).toBe(first.id);
    expect(await takeAway(dlq, left)).toBe(true);
    await kit.waitDepth(dlq, 1);

    const v = await rest(jobId, verdict);
    const rows = await ledger(jobId);
    expect(rows.map((x) => [x.letterId, x.state])).toEqual([
      [first.id, "moved"],
      [second.id, "missing"],
      [other.id, "moved"],
    ]);
    // Asked for by the rest and again by the engine's final look before it was recorded missing.
    expect(rows[1].attempts).toBe(2);
    expect(rows[1].reason).toBe(moveWords("move").missing(dlq));
    expect(v.progress).toMatchObject({ redriven: 2, missing: 1 });
    const summary = "2 moved, 1 missing (not found when the DLQ was looked through)";
    expect(v.progress).toMatchObject({ result: { complete: false, left: 1, summary } });
    const finished = await getDb().auditEvent.findFirst({ where: { operationId: jobId, action: "redrive.finished" } });
    expect(finished).toMatchObject({ outcome: "failure", details: expect.objectContaining({ summary }) });
    expect((await peek(source)).map((m) => m.content.toString()).sort()).toEqual([TWIN, OTHER].sort());
    expect(await kit.depth(dlq)).toBe(0);
  });
});

describe("twins through the adapter", () => {
  it("moveLetters [k-X~2] when only one k-X is left: moved (to the queue it names); [k-X, k-X~2] with one left: one moved, one missing", async () => {
    const { dlq } = await twinDlq();
    const { first, second, other } = await listed(dlq);
    expect(await takeAway(dlq, first)).toBe(true);
    await kit.waitDepth(dlq, 2);
    expect((await browseAll(dlq)).map((l) => l.id)).toEqual([first.id, other.id]);
    const target = await kit.queue(kit.name("target"));

    const results = await collectMoves(adapter.moveLetters(dlq, [moveReq(second, target)]));
    expect(results).toEqual([
      {
        letterId: second.id,
        outcome: "moved",
        destination: `default exchange, routing key "${target}" (queue "${target}")`,
        target,
        reason: null,
        orderingKey: null,
      },
    ]);
    expect((await peek(target)).map((m) => m.content.toString())).toEqual([TWIN]);
    expect((await browseAll(dlq)).map((l) => l.id)).toEqual([other.id]);

    // Both asked for, one of them left: the one left answers its own id; the other is missing.
    const { dlq: dlq2 } = await twinDlq();
    const two = await listed(dlq2);
    expect(await takeAway(dlq2, two.first)).toBe(true);
    await kit.waitDepth(dlq2, 2);
    const both = await collectMoves(
      adapter.moveLetters(dlq2, [moveReq(two.first, target), moveReq(two.second, target)]),
    );
    const by = new Map(both.map((r) => [r.letterId, r]));
    expect(both).toHaveLength(2);
    expect(by.get(two.first.id)).toMatchObject({ outcome: "moved", target });
    expect(by.get(two.second.id)).toMatchObject({
      outcome: "missing",
      target: null,
      reason: moveWords("move").missing(dlq2),
    });
    expect((await browseAll(dlq2)).map((l) => l.id)).toEqual([two.other.id]);
  });

  it("a repair of k-X~2 when only one k-X is left: the twin's copy is archived under the requested id, then it moves", async () => {
    const { dlq } = await twinDlq();
    const { first, second } = await listed(dlq);
    expect(await takeAway(dlq, first)).toBe(true);
    await kit.waitDepth(dlq, 2);
    const target = await kit.queue(kit.name("target"));
    const copies: LetterCopy[] = [];
    const req = { ...moveReq(second, target), repair: { operationId: randomUUID(), setHeaders: { "x-fixed": "yes" } } };
    const results = await collectMoves(
      adapter.moveLetters(dlq, [req], { beforeRemove: async (c) => void copies.push(c) }),
    );
    expect(results).toEqual([
      expect.objectContaining({ letterId: second.id, outcome: "moved", target, copyId: req.markers.replayId }),
    ]);
    expect(copies).toHaveLength(1);
    expect(copies[0].letterId).toBe(second.id);
    expect(copies[0].letter.id).toBe(first.id); // the bytes that left: the twin, listed k-X when it left
    expect(text(copies[0].letter.body)).toBe(TWIN);
    const [copy] = await peek(target);
    expect(copy.properties.headers?.["x-fixed"]?.toString()).toBe("yes");
    expect(copy.properties.messageId).toBe(req.markers.replayId);
  });

  it("removeLetters of both twins: both removed, one archive copy each; a twin asked for by its old id after the other left: removed", async () => {
    const { dlq } = await twinDlq();
    const { first, second, other } = await listed(dlq);
    const copies: LetterCopy[] = [];
    const remove = (ls: Letter[]) =>
      collect(
        adapter.removeLetters(
          dlq,
          ls.map((l) => ({ letterId: l.id, sha256: l.sha256 })),
          { operationId: randomUUID(), beforeRemove: async (c) => void copies.push(c) },
        ),
      );
    const results = await remove([first, second]);
    expect(results).toEqual([
      { letterId: first.id, outcome: "removed", reason: null },
      { letterId: second.id, outcome: "removed", reason: null },
    ]);
    expect(copies.map((c) => [c.letterId, c.letter.id, text(c.letter.body)])).toEqual([
      [first.id, first.id, TWIN],
      [second.id, second.id, TWIN],
    ]);
    expect((await browseAll(dlq)).map((l) => l.id)).toEqual([other.id]);

    // One twin discarded, then the other asked for by the id it had before (`~2`): it is the one left.
    const { dlq: dlq2 } = await twinDlq();
    const two = await listed(dlq2);
    copies.length = 0;
    const one = await collect(
      adapter.removeLetters(dlq2, [{ letterId: two.first.id, sha256: two.first.sha256 }], {
        operationId: randomUUID(),
        beforeRemove: async (c) => void copies.push(c),
      }),
    );
    expect(one).toEqual([{ letterId: two.first.id, outcome: "removed", reason: null }]);
    const again = await collect(
      adapter.removeLetters(dlq2, [{ letterId: two.second.id, sha256: two.second.sha256.toUpperCase() }], {
        operationId: randomUUID(),
        beforeRemove: async (c) => void copies.push(c),
      }),
    );
    expect(again).toEqual([{ letterId: two.second.id, outcome: "removed", reason: null }]);
    expect(copies.map((c) => [c.letterId, c.letter.id])).toEqual([
      [two.first.id, two.first.id],
      [two.second.id, two.first.id],
    ]);
    expect((await browseAll(dlq2)).map((l) => l.id)).toEqual([two.other.id]);
  });

  it("a lost-ack leftover check (ownIdentityOnly) removes no letter known only by its content: an untouched twin could answer for it", async () => {
    const { dlq } = await twinDlq();
    const { first, second, other } = await listed(dlq);
    const copies: LetterCopy[] = [];
    const results = await collect(
      adapter.removeLetters(
        dlq,
        [first, second, other].map((l) => ({ letterId: l.id, sha256: l.sha256 })),
        { operationId: randomUUID(), ownIdentityOnly: true, beforeRemove: async (c) => void copies.push(c) },
      ),
    );
    const why = moveWords("discard").contentIdentity;
    expect(results).toEqual(
      [first, second, other].map((l) => ({ letterId: l.id, outcome: "failed", reason: why, contentIdentified: true })),
    );
    expect(copies).toEqual([]);
    expect((await browseAll(dlq)).map((l) => l.id)).toEqual([first.id, second.id, other.id]);
  });

  it("getLetter(k-X~2) after its twin left: the twin; an id with no twin in the DLQ: null", async () => {
    const { dlq } = await twinDlq();
    const { first, second, other } = await listed(dlq);
    expect((await adapter.getLetter(dlq, second.id))?.id).toBe(second.id); // exact while both are there
    expect(await takeAway(dlq, first)).toBe(true);
    await kit.waitDepth(dlq, 2);
    const got = await adapter.getLetter(dlq, second.id);
    expect(got).toMatchObject({ id: first.id, sha256: second.sha256, position: 0 });
    expect(text(got!.body)).toBe(TWIN);
    expect((await adapter.getLetter(dlq, `${other.id}~2`))?.id).toBe(other.id);
    expect(await adapter.getLetter(dlq, "k-AAAAAAAAAAAAAAAAAAAAAA~2")).toBeNull();
  });
});
