import { createHash, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testActors, useConsoleConfig } from "@/test/console-config";
import { openPayload } from "@/lib/archive/store";
import type { Actor } from "@/lib/auth/session";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { redriveHandler, type RedriveDeps } from "@/lib/redrive/handler";
import { getRedrive, planRedrive, startBulk, startRedrive } from "@/lib/redrive/use-cases";
import { scanHandler } from "@/lib/triage/scan";
import { previewGroupRepair } from "@/lib/redrive/repair-preview";

/**
 * Group repair on the real RabbitMQ and Postgres: ten letters of one group dead-lettered
 * by a real rejection and scanned into the triage index; one JSON Patch previewed letter by letter,
 * then sent as a redrive with a repair through the use cases and the job worker (sample, watch,
 * bulk); refusals (role, switch) audited with nothing moved.
 */
const ON = "grouprepair-on";
const OFF = "grouprepair-off";
const enc = (s: string) => new TextEncoder().encode(s);
const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");
const meta = () => ({ requestId: `gr-${randomUUID()}`, ip: "127.0.0.1" });
const actors: Record<"viewer" | "operator" | "admin", Actor> = {} as never;
const kit = new RabbitKit();
const FAST: Partial<RedriveDeps> = { returnCheckMs: 300, verifyGraceMs: 1000 };
let consoleConfig: Awaited<ReturnType<typeof useConsoleConfig>>;

const PATCH = {
  kind: "json-patch" as const,
  operations: [
    { op: "test", path: "/status", value: "PAYED" },
    { op: "replace", path: "/status", value: "PAID" },
  ],
};
const REASON = "Status enum typo (PAYED) fixed in orders 2.3.3, INC-77";
/** Letter 7 has no status field: the patch's test cannot match it. */
const body = (i: number) =>
  i === 7 ? `{"order":${i},"amount":"12.50"}` : `{"order":${i},"status":"PAYED","amount":"12.50"}`;

beforeAll(async () => {
  const config = {
    connections: [testConfig({ id: ON }), testConfig({ id: OFF })],
    repair: [{ connection: ON, queue: `${kit.prefix}.dlq.*` }],
  };
  consoleConfig = await useConsoleConfig(config);
  Object.assign(actors, await testActors("group-repair.test", ["viewer", "operator", "admin"]));
});

afterAll(async () => {
  await kit.cleanup();
  await consoleConfig.restore();
});

async function scan(connectionId: string, queue: string) {
  const kind = `scan-gr-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({ kind: kind as "scan", connectionId, queue, params: { acceptRisk: true } });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 10_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

/** Ten letters of one group (same exception class) in a fresh DLQ of `connectionId`, scanned. */
async function seeded(connectionId: string) {
  const letters = Array.from({ length: 10 }, (_, i) => ({
    body: enc(body(i)),
    messageId: `m-${i}`,
    headers: { "x-exception-class": "com.acme.orders.UnknownStatusException" },
  }));
  const { dlq, source } = await kit.dlqByReject(letters);
  await scan(connectionId, dlq);
  const groups = await getDb().$queryRawUnsafe<Array<{ group_key: string; n: number }>>(
    `SELECT group_key, count(*)::int AS n FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL GROUP BY group_key`,
    connectionId,
    dlq,
  );
  expect(groups).toHaveLength(1);
  return { dlq, source, groupKey: groups[0].group_key };
}

const peek = (queue: string, expected: number) => kit.peek(queue, expected);

const worker = (jobId: string) =>
  new JobWorker({
    handlers: { redrive: redriveHandler(FAST) },
    owner: `gr-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    pollMs: 50,
    scope: { jobIds: [jobId] },
  });

describe("group repair on RabbitMQ", () => {
  it("previews the patch letter by letter, then resubmits the nine it applies to as a redrive; the tenth stays in the DLQ with the reason", async () => {
    const { dlq, source, groupKey } = await seeded(ON);
    const selection = { kind: "group" as const, groupKey };

    const preview = await previewGroupRepair(actors.admin, meta(), {
      connectionId: ON,
      queue: dlq,
      selection,
      patch: PATCH,
      limit: 4,
    });
    expect(preview).toMatchObject({ total: 10, applies: 9, doesNotApply: 1, truncated: true });
    expect(preview.letters).toHaveLength(4);
    const all = await previewGroupRepair(actors.admin, meta(), {
      connectionId: ON,
      queue: dlq,
      selection,
      patch: PATCH,
      limit: 10,
    });
    expect(all.letters).toHaveLength(10);
    const refusedLetter = all.letters.filter((l) => !l.applies);
    expect(refusedLetter).toHaveLength(1);
    expect(refusedLetter[0]).toMatchObject({ messageId: "m-7", diff: null });
    expect(refusedLetter[0].reason).toMatch(/test/);
    for (const l of all.letters.filter((x) => x.applies)) {
      expect(l.reason).toBeNull();
      expect(l.diff).toMatchObject({
        kind: "json",
        entries: [{ op: "change", path: "/status", before: '"PAYED"', after: '"PAID"' }],
      });
    }
    expect(await kit.depth(dlq)).toBe(10); // a preview moves nothing

    const repair = { patch: PATCH, reason: REASON };
    const plan = await planRedrive(actors.admin, meta(), { connectionId: ON, queue: dlq, selection, repair });
    expect(plan.count).toBe(10);
    const started = await startRedrive(actors.admin, meta(), {
      connectionId: ON,
      queue: dlq,
      selection,
      repair,
      fix: "orders 2.3.3 accepts PAID",
      confirmedCount: plan.count,
      watchSeconds: 1,
      sample: { count: 3 },
      rate: 50,
    });
    expect(started.plan.repair).toEqual(repair);
    // Roles that may not repair read the patch's operations and paths, never the values it writes or tests.
    for (const who of [actors.viewer, actors.operator]) {
      const seen = (await getRedrive(who, meta(), { jobId: started.id })).redrive.plan.repair;
      expect(seen).toEqual({
        reason: REASON,
        patch: {
          kind: "json-patch",
          operations: [
            { op: "test", path: "/status", value: "[hidden]" },
            { op: "replace", path: "/status", value: "[hidden]" },
          ],
        },
      });
    }
    expect((await getRedrive(actors.admin, meta(), { jobId: started.id })).redrive.plan.repair).toEqual(repair);

    await worker(started.id).runOnce(); // sample of 3, watched 1 s, paused with the verdict
    let v = (await getRedrive(actors.admin, meta(), { jobId: started.id })).redrive;
    // Nobody consumes the origin here: nothing shows a reader took the 3 copies, so the verdict is
    // inconclusive and the rest goes with "continue anyway" and a reason.
    expect(v).toMatchObject({
      state: "paused",
      stage: "awaiting_bulk",
      sampleVerdict: "inconclusive",
      bulk: { ready: true, needsReason: true },
    });
    expect(await kit.depth(source)).toBe(3);

    const continueReason = "Nobody consumes the origin in this test; the copies are read back below";
    await startBulk(actors.admin, meta(), { jobId: started.id, continueAnywayReason: continueReason });
    await worker(started.id).runOnce();
    const done = await getRedrive(actors.admin, meta(), { jobId: started.id, limit: 100 });
    v = done.redrive;
    expect(v.state).toBe("succeeded");
    expect(done.counts).toMatchObject({ moved: 9, failed: 1 });

    // Nine repaired copies at the origin: PAID, everything else byte for byte, the repair marker.
    const arrived = await peek(source, 9);
    expect(arrived.map((m) => JSON.parse(m.content.toString("utf8")).order).sort()).toEqual([
      0, 1, 2, 3, 4, 5, 6, 8, 9,
    ]);
    for (const m of arrived) {
      const order = JSON.parse(m.content.toString("utf8")).order as number;
      expect(m.content.toString("utf8")).toBe(body(order).replace('"PAYED"', '"PAID"'));
      expect(String(m.properties.headers?.[REPAIR_HEADER])).toBe(started.id);
      expect(String(m.properties.headers?.[REDRIVE_HEADERS.originalMessageId])).toBe(`m-${order}`);
      expect(m.properties.headers?.["x-death"]).toBeDefined();
    }

    // The tenth is still in the DLQ, untouched, and the ledger says why.
    const left = await peek(dlq, 1);
    expect(left.map((m) => m.properties.messageId)).toEqual(["m-7"]);
    expect(left[0].content.toString("utf8")).toBe(body(7));
    const failedRow = done.ledger.find((r) => r.state === "failed")!;
    expect(failedRow.messageId).toBe("m-7");
    expect(failedRow.reason).toMatch(
      /^Not repaired: The patch does not apply: operation 1 \(test \/status\).*It stays in the DLQ\.$/,
    );

    // The nine originals are in the archive under the job's id, with the reason, as they were.
    const archived = await getDb().$queryRawUnsafe<
      Array<{
        connection_id: string;
        queue: string;
        letter_id: string;
        discard_job_id: string;
        payload_ciphertext: Uint8Array;
        payload_key_id: string;
        discard_reason: string;
        message_id: string;
      }>
    >(
      `SELECT connection_id, queue, letter_id, discard_job_id::text AS discard_job_id, payload_ciphertext, payload_key_id, discard_reason, message_id FROM archived_letters WHERE discard_job_id = $1::uuid`,
      started.id,
    );
    expect(archived.map((a) => a.message_id).sort()).toEqual([
      "m-0",
      "m-1",
      "m-2",
      "m-3",
      "m-4",
      "m-5",
      "m-6",
      "m-8",
      "m-9",
    ]);
    for (const a of archived) {
      const text = openPayload({
        connectionId: a.connection_id,
        queue: a.queue,
        letterId: a.letter_id,
        discardJobId: a.discard_job_id,
        payloadCiphertext: a.payload_ciphertext,
        payloadKeyId: a.payload_key_id,
      }).toString("utf8");
      expect(text).toBe(body(Number(a.message_id.slice(2))));
      expect(a.discard_reason).toContain("INC-77");
    }

    // Audit: a letter.repaired row per letter under the job's operation id, with the diff and hashes.
    const audit = await getDb().auditEvent.findMany({ where: { operationId: started.id }, orderBy: { id: "asc" } });
    const start = audit.find((a) => a.action === "redrive.start")!;
    expect(start.details).toMatchObject({
      repair: {
        reason: REASON,
        patch: "json-patch",
        operations: [
          { op: "test", path: "/status" },
          { op: "replace", path: "/status" },
        ],
      },
    });
    const repaired = audit.filter((a) => a.action === "letter.repaired" && a.scope === "letter");
    expect(repaired).toHaveLength(10);
    const ok = repaired.filter((a) => a.outcome === "success");
    expect(ok).toHaveLength(9);
    for (const a of ok) {
      const d = a.details as Record<string, unknown>;
      const order = Number(String(d.messageId).slice(2));
      expect(d).toMatchObject({
        outcome: "moved",
        sha256: sha(body(order)),
        afterSha256: sha(body(order).replace('"PAYED"', '"PAID"')),
        repairReason: REASON,
      });
      expect(d.diff).toMatchObject({
        payload: { kind: "json", entries: [{ op: "change", path: "/status", before: '"PAYED"', after: '"PAID"' }] },
      });
      expect(d.archiveId).toMatch(/^[0-9a-f-]{36}$/);
      expect(d.copyId).toMatch(/\S/);
    }
    const notRepaired = repaired.find((a) => a.outcome === "failure")!;
    expect(notRepaired.details).toMatchObject({ outcome: "failed", messageId: "m-7", diff: null, afterSha256: null });
    expect(String((notRepaired.details as Record<string, unknown>).reason)).toMatch(/does not apply/);
    expect(audit.filter((a) => a.action === "letter.redrive" && a.scope === "letter")).toHaveLength(10);
    const continued = audit.filter((a) => a.action === "redrive.continue_anyway");
    expect(continued).toHaveLength(1);
    expect(continued[0]).toMatchObject({ outcome: "success", actorEmail: actors.admin.email });
    expect(continued[0].details).toMatchObject({ verdict: "inconclusive", reason: continueReason });
  }, 120_000);

  it("an operator cannot preview, plan or start a repairing redrive (audited), and nothing moves", async () => {
    const { dlq, groupKey } = await seeded(ON);
    const selection = { kind: "group" as const, groupKey };
    const repair = { patch: PATCH, reason: REASON };
    const m = meta();
    await expect(
      startRedrive(actors.operator, m, {
        connectionId: ON,
        queue: dlq,
        selection,
        repair,
        fix: "orders 2.3.3",
        confirmedCount: 10,
      }),
    ).rejects.toMatchObject({ code: "forbidden:letter:repair" });
    const p = meta();
    await expect(
      planRedrive(actors.operator, p, { connectionId: ON, queue: dlq, selection, repair }),
    ).rejects.toMatchObject({ code: "forbidden:letter:repair" });
    const q = meta();
    await expect(
      previewGroupRepair(actors.operator, q, { connectionId: ON, queue: dlq, selection, patch: PATCH }),
    ).rejects.toMatchObject({ code: "forbidden:letter:repair" });
    for (const [req, action] of [
      [m, "redrive.start"],
      [p, "redrive.plan"],
      [q, "redrive.repair_preview"],
    ] as const) {
      const rows = await getDb().auditEvent.findMany({ where: { requestId: req.requestId } });
      expect(rows.map((r) => [r.action, r.outcome])).toEqual([[action, "denied"]]);
    }
    expect(await getDb().redrivePlan.count({ where: { queue: dlq } })).toBe(0);
    expect(await kit.depth(dlq)).toBe(10);
    // The same operator may still redrive these letters as they are.
    const plain = await planRedrive(actors.operator, meta(), { connectionId: ON, queue: dlq, selection });
    expect(plain.count).toBe(10);
  });

  it("the switch off refuses the preview and the start (audited); nothing is created or moved", async () => {
    const { dlq, groupKey } = await seeded(OFF);
    const selection = { kind: "group" as const, groupKey };
    const m = meta();
    await expect(
      startRedrive(actors.admin, m, {
        connectionId: OFF,
        queue: dlq,
        selection,
        repair: { patch: PATCH, reason: REASON },
        fix: "orders 2.3.3",
        confirmedCount: 10,
      }),
    ).rejects.toMatchObject({ code: "forbidden:repair-disabled" });
    expect(
      (await getDb().auditEvent.findMany({ where: { requestId: m.requestId } })).map((r) => [
        r.action,
        r.outcome,
        (r.details as { error?: string }).error,
      ]),
    ).toEqual([["redrive.start", "denied", "forbidden:repair-disabled"]]);
    const q = meta();
    await expect(
      previewGroupRepair(actors.admin, q, { connectionId: OFF, queue: dlq, selection, patch: PATCH }),
    ).rejects.toMatchObject({ code: "forbidden:repair-disabled" });
    expect(
      (await getDb().auditEvent.findMany({ where: { requestId: q.requestId } })).map((r) => [r.action, r.outcome]),
    ).toEqual([["redrive.repair_preview", "denied"]]);
    expect(await getDb().redrivePlan.count({ where: { queue: dlq } })).toBe(0);
    expect(await kit.depth(dlq)).toBe(10);
  });

  it("a repairing redrive whose DLQ the switch no longer covers pauses at its next run (audited) and moves nothing", async () => {
    const { dlq, groupKey } = await seeded(ON);
    const selection = { kind: "group" as const, groupKey };
    const started = await startRedrive(actors.admin, meta(), {
      connectionId: ON,
      queue: dlq,
      selection,
      repair: { patch: PATCH, reason: REASON },
      fix: "orders 2.3.3",
      confirmedCount: 10,
      watchSeconds: 1,
    });
    const { resetConfigCache } = await import("@/lib/config");
    const file = process.env.DLQ_CONSOLE_CONFIG!;
    const before = (await import("node:fs")).readFileSync(file, "utf8");
    writeFileSync(file, JSON.stringify({ ...JSON.parse(before), repair: [] }));
    resetConfigCache();
    try {
      await worker(started.id).runOnce();
    } finally {
      writeFileSync(file, before);
      resetConfigCache();
    }
    const v = (await getRedrive(actors.admin, meta(), { jobId: started.id })).redrive;
    expect(v.state).toBe("paused");
    expect(v.pauseReason).toMatch(/not enabled for this DLQ/);
    expect(await kit.depth(dlq)).toBe(10);
    const pause = await getDb().auditEvent.findMany({
      where: { operationId: started.id, action: "redrive.auto_pause" },
    });
    expect(pause.map((a) => [a.outcome, (a.details as { why?: string }).why])).toEqual([["denied", "repair_disabled"]]);
  });

  it("refuses a malformed JSON Patch before anything is counted", async () => {
    await expect(
      previewGroupRepair(actors.admin, meta(), {
        connectionId: ON,
        queue: `${kit.prefix}.dlq.none`,
        selection: { kind: "filter", filter: {} },
        patch: { kind: "json-patch", operations: [{ op: "frobnicate", path: "/x" }] },
      }),
    ).rejects.toMatchObject({ code: "bad_request:repair" });
  });
});
