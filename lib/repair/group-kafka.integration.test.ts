import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testActors, useConsoleConfig } from "@/test/console-config";
import type { Actor } from "@/lib/auth/session";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { redriveHandler, type RedriveDeps } from "@/lib/redrive/handler";
import { getRedrive, planRedrive, startBulk, startRedrive } from "@/lib/redrive/use-cases";
import { scanHandler } from "@/lib/triage/scan";

/**
 * Group repair on an ordered stream, on the real Kafka: a letter the patch does not fit
 * stays in the DLT, and no later letter of its key overtakes it (the adapter holds the key back, as
 * for any failure); letters of other keys are repaired and resubmitted.
 */
const CONN = "grouprepair-kafka";
const enc = (s: string) => new TextEncoder().encode(s);
const meta = () => ({ requestId: `grk-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new KafkaKit();
const FAST: Partial<RedriveDeps> = { returnCheckMs: 300, verifyGraceMs: 1000 };
let admin: Actor;
let consoleConfig: Awaited<ReturnType<typeof useConsoleConfig>>;

/** In DLT order: key k1 gets a letter the patch fits, one it does not (no status), then another it fits; k2 one it fits. */
const LETTERS = [
  { key: "k1", body: '{"order":0,"status":"PAYED"}' },
  { key: "k1", body: '{"order":1,"amount":"9.99"}' },
  { key: "k1", body: '{"order":2,"status":"PAYED"}' },
  { key: "k2", body: '{"order":3,"status":"PAYED"}' },
];
const PATCH = {
  kind: "json-patch" as const,
  operations: [
    { op: "test", path: "/status", value: "PAYED" },
    { op: "replace", path: "/status", value: "PAID" },
  ],
};

beforeAll(async () => {
  consoleConfig = await useConsoleConfig({
    connections: [testConfig({ id: CONN })],
    repair: [{ connection: CONN, queue: `${kit.prefix}*` }],
  });
  ({ admin } = await testActors("group-repair-kafka.test", ["admin"]));
});

afterAll(async () => {
  await kit.cleanup();
  await consoleConfig.restore();
});

const worker = (
  kind: string,
  handler: ReturnType<typeof redriveHandler> | ReturnType<typeof scanHandler>,
  jobId?: string,
) =>
  new JobWorker({
    handlers: { [kind]: handler },
    owner: `grk-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    pollMs: 50,
    ...(jobId ? { scope: { jobIds: [jobId] } } : {}),
  });

describe("group repair on Kafka (keys keep their order)", () => {
  it("repairs the letters the patch fits; the one it does not fit holds back the later letter of its key", async () => {
    const { dlt, source } = await kit.springDlt(
      LETTERS.map((l) => ({ body: enc(l.body), key: l.key })),
      { fails: () => ({ exceptionClass: "com.acme.orders.UnknownStatusException", message: "Unknown status" }) },
    );
    const kind = `scan-grk-${randomUUID().slice(0, 8)}`;
    const scan = await jobStore().enqueue({ kind: kind as "scan", connectionId: CONN, queue: dlt, params: {} });
    await worker(kind, scanHandler()).runOnce();
    expect((await jobStore().get(scan.id))?.state).toBe("succeeded");
    const groups = await getDb().$queryRawUnsafe<Array<{ group_key: string }>>(
      `SELECT DISTINCT group_key FROM triage_letters WHERE connection_id = $1 AND queue = $2`,
      CONN,
      dlt,
    );
    expect(groups).toHaveLength(1);
    const selection = { kind: "group" as const, groupKey: groups[0].group_key };
    const repair = { patch: PATCH, reason: "Status enum typo fixed, INC-78" };

    const plan = await planRedrive(admin, meta(), { connectionId: CONN, queue: dlt, selection, repair });
    expect(plan.count).toBe(4);
    const started = await startRedrive(admin, meta(), {
      connectionId: CONN,
      queue: dlt,
      selection,
      repair,
      fix: "orders 2.3.3",
      confirmedCount: 4,
      watchSeconds: 1,
      sample: { count: 1 },
      rate: 50,
    });
    await worker("redrive", redriveHandler(FAST), started.id).runOnce();
    let v = (await getRedrive(admin, meta(), { jobId: started.id })).redrive;
    if (v.state === "paused" && v.bulk.ready) {
      // Nobody reads the origin topic here: the sample is inconclusive, so the rest goes
      // with "continue anyway" and a reason.
      expect(v).toMatchObject({ sampleVerdict: "inconclusive", bulk: { needsReason: true } });
      await startBulk(admin, meta(), {
        jobId: started.id,
        continueAnywayReason: "Nobody reads the origin topic in this test",
      });
      await worker("redrive", redriveHandler(FAST), started.id).runOnce();
    }
    const done = await getRedrive(admin, meta(), { jobId: started.id, limit: 100 });
    v = done.redrive;
    expect(["succeeded", "failed"]).toContain(v.state);

    const byOrder = new Map(done.ledger.map((r) => [r.letterId, r]));
    const rows = [...byOrder.values()].sort((a, b) => a.seq - b.seq);
    const states = rows.map((r) => r.state).sort();
    expect(states).toEqual(["failed", "failed", "moved", "moved"]);
    const reasons = rows.filter((r) => r.state === "failed").map((r) => r.reason ?? "");
    expect(reasons.some((r) => /^Not repaired: The patch does not apply/.test(r))).toBe(true);
    expect(reasons.some((r) => /Held back/.test(r))).toBe(true);

    // At the origin: the repaired copies of orders 0 and 3 only; order 2 did not overtake order 1.
    const copies = (await kit.readAll(source)).map((c) => ({ body: c.value, headers: c.headers }));
    const repaired = copies.filter((c) => c.headers[REPAIR_HEADER] === started.id);
    expect(repaired.map((c) => JSON.parse(c.body).order).sort()).toEqual([0, 3]);
    for (const c of repaired) expect(JSON.parse(c.body).status).toBe("PAID");
  }, 120_000);
});
