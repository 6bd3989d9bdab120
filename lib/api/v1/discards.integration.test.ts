import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { discardHandler } from "@/lib/discard/handler";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { auditRowsOf, callV1, expectDocumented, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import * as plan from "@/app/api/v1/discards/plan/route";
import * as discards from "@/app/api/v1/discards/route";
import * as one from "@/app/api/v1/discards/[id]/route";
import * as cancel from "@/app/api/v1/discards/[id]/cancel/route";
import * as jobLedger from "@/app/api/v1/jobs/[id]/ledger/route";

/**
 * A discard driven through /api/v1 only (after seeding letters on the real RabbitMQ and scanning
 * them): plan, start with the confirmed count and a reason, poll to the end, read the ledger; the
 * archive and the broker are then read to see that every letter was archived before it left.
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => new TextEncoder().encode(s);
const kit = new RabbitKit();
let u: Record<"viewer" | "operator" | "admin", V1User>;
const workers: JobWorker[] = [];

beforeAll(async () => {
  u = await v1Users("discards-v1", ["viewer", "operator", "admin"]);
});
afterAll(async () => {
  for (const w of workers) await w.stop();
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

async function seeded(n: number) {
  const letters = Array.from({ length: n }, (_, i) => ({
    body: enc(`{"order":${i}}`),
    messageId: `v1d-${i}`,
    headers: { "x-exception-class": "com.acme.InvalidOrder" },
  }));
  const { dlq } = await kit.dlqByReject(letters);
  const kind = `scan-v1dc-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId: CONN,
    queue: dlq,
    params: { acceptRisk: true },
  });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 10_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
  return dlq;
}

function runWorker(jobId: string) {
  const w = new JobWorker({
    handlers: { discard: discardHandler() },
    owner: `v1dc-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    pollMs: 50,
    scope: { jobIds: [jobId] },
  });
  w.start();
  workers.push(w);
}

const post = (h: V1Handler, url: string, token: string, json: unknown, params?: Record<string, string>) =>
  callV1(h, url, { token, json, params });
const get = (h: V1Handler, url: string, token: string, params?: Record<string, string>) =>
  callV1(h, url, { token, params });

async function groupKeyOf(dlq: string): Promise<string> {
  const [g] = await getDb().$queryRawUnsafe<Array<{ group_key: string }>>(
    `SELECT group_key FROM triage_groups WHERE connection_id = $1 AND queue = $2`,
    CONN,
    dlq,
  );
  return g.group_key;
}

describe("discards through /api/v1 on RabbitMQ", () => {
  it("plans and discards a triage group with the confirmed count and a reason: every letter archived, then gone from the DLQ", async () => {
    const N = 9;
    const dlq = await seeded(N);
    const selection = { kind: "group", groupKey: await groupKeyOf(dlq) };
    const reason = "Orders for a retired product line; never valid";

    const byOperator = await post(plan.POST as V1Handler, "/api/v1/discards/plan", u.operator.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
    });
    expect(byOperator.status).toBe(403);
    await expectDocumented("post", "/api/v1/discards/plan", byOperator.res, byOperator.body);
    expect(byOperator.body).toMatchObject({ code: "forbidden:discard:run" });

    const p = await post(plan.POST as V1Handler, "/api/v1/discards/plan", u.admin.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
    });
    expect(p.status).toBe(200);
    await expectDocumented("post", "/api/v1/discards/plan", p.res, p.body);
    expect(p.body).toMatchObject({ count: N, scope: `group ${selection.groupKey}` });

    const noReason = await post(discards.POST as V1Handler, "/api/v1/discards", u.admin.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
      confirmedCount: N,
    });
    expect(noReason.status).toBe(400);
    await expectDocumented("post", "/api/v1/discards", noReason.res, noReason.body);

    const wrong = await post(discards.POST as V1Handler, "/api/v1/discards", u.admin.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
      reason,
      confirmedCount: N - 1,
    });
    expect(wrong.status).toBe(409);
    await expectDocumented("post", "/api/v1/discards", wrong.res, wrong.body);
    expect(wrong.body).toMatchObject({ code: "conflict:count" });
    expect(wrong.body.detail).toContain(`now holds ${N} letters`);
    expect(await kit.depth(dlq)).toBe(N);

    const started = await post(discards.POST as V1Handler, "/api/v1/discards", u.admin.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
      reason,
      confirmedCount: N,
    });
    expect(started.status).toBe(202);
    await expectDocumented("post", "/api/v1/discards", started.res, started.body);
    expect(started.body).toMatchObject({
      state: "queued",
      total: N,
      reason,
      selection,
      createdBy: u.admin.actor.email,
    });
    const id: string = started.body.id;
    expect((await auditRowsOf(started.requestId)).map((r) => [r.action, r.outcome, r.operationId])).toContainEqual([
      "discard.start",
      "success",
      id,
    ]);

    runWorker(id);
    const until = Date.now() + 45_000;
    let detail: Awaited<ReturnType<typeof get>>;
    for (;;) {
      detail = await get(one.GET as V1Handler, `/api/v1/discards/${id}?limit=4`, u.viewer.token, { id });
      expect(detail.status).toBe(200);
      if (["succeeded", "failed", "cancelled"].includes(detail.body.discard.state)) break;
      if (Date.now() > until) throw new Error(`discard ${id} is still ${detail.body.discard.state}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await expectDocumented("get", "/api/v1/discards/{id}", detail.res, detail.body);
    expect(detail.body.discard).toMatchObject({ state: "succeeded", progress: { discarded: N } });
    expect(detail.body.counts).toMatchObject({ discarded: N, failed: 0, pending: 0 });
    expect(detail.body.ledger).toHaveLength(4);
    expect(detail.body.nextAfter).toEqual(expect.any(Number));

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await get(
        jobLedger.GET as V1Handler,
        `/api/v1/jobs/${id}/ledger?limit=4${cursor ? `&cursor=${cursor}` : ""}`,
        u.viewer.token,
        { id },
      );
      expect(page.status).toBe(200);
      await expectDocumented("get", "/api/v1/jobs/{id}/ledger", page.res, page.body);
      expect(page.body.kind).toBe("discard");
      for (const row of page.body.items) {
        expect(row).toMatchObject({ state: "discarded", archiveId: expect.any(String) });
        seen.push(row.letterId);
      }
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(N);
    expect(seen).toHaveLength(N);

    // Archived as the use case does (one archive row per letter, under this discard), and gone from the broker.
    const archived = await getDb().$queryRawUnsafe<Array<{ letter_id: string }>>(
      `SELECT letter_id FROM archived_letters WHERE discard_job_id = $1::uuid`,
      id,
    );
    expect(archived.map((a) => a.letter_id).sort()).toEqual([...seen].sort());
    expect(await kit.depth(dlq)).toBe(0);

    const badState = await get(jobLedger.GET as V1Handler, `/api/v1/jobs/${id}/ledger?state=moved`, u.viewer.token, {
      id,
    });
    expect(badState.status).toBe(400);
    await expectDocumented("get", "/api/v1/jobs/{id}/ledger", badState.res, badState.body);
  }, 120_000);

  it("cancels a queued discard at once (nothing leaves the DLQ); lists discards by cursor", async () => {
    const N = 3;
    const dlq = await seeded(N);
    const selection = { kind: "filter", filter: {} };
    const started = await post(discards.POST as V1Handler, "/api/v1/discards", u.admin.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
      reason: "Test traffic from a load test",
      confirmedCount: N,
    });
    expect(started.status).toBe(202);
    const id: string = started.body.id;

    const refused = await post(cancel.POST as V1Handler, `/api/v1/discards/${id}/cancel`, u.operator.token, {}, { id });
    expect(refused.status).toBe(403);
    await expectDocumented("post", "/api/v1/discards/{id}/cancel", refused.res, refused.body);

    const c = await post(cancel.POST as V1Handler, `/api/v1/discards/${id}/cancel`, u.admin.token, {}, { id });
    expect(c.status).toBe(200);
    await expectDocumented("post", "/api/v1/discards/{id}/cancel", c.res, c.body);
    expect(c.body).toMatchObject({ id, state: "cancelled", cancelRequested: true });
    expect(await kit.depth(dlq)).toBe(N);

    const missing = await post(
      cancel.POST as V1Handler,
      `/api/v1/discards/${randomUUID()}/cancel`,
      u.admin.token,
      {},
      { id: randomUUID() },
    );
    expect(missing.status).toBe(404);
    await expectDocumented("post", "/api/v1/discards/{id}/cancel", missing.res, missing.body);

    const first = await get(discards.GET as V1Handler, `/api/v1/discards?connectionId=${CONN}&limit=1`, u.viewer.token);
    expect(first.status).toBe(200);
    await expectDocumented("get", "/api/v1/discards", first.res, first.body);
    expect(first.body.items.map((d: { id: string }) => d.id)).toEqual([id]);
    const second = await get(
      discards.GET as V1Handler,
      `/api/v1/discards?connectionId=${CONN}&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      u.viewer.token,
    );
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.items[0].id).not.toBe(id);
    const ofDlq = await get(
      discards.GET as V1Handler,
      `/api/v1/discards?connectionId=${CONN}&queue=${encodeURIComponent(dlq)}`,
      u.viewer.token,
    );
    expect(ofDlq.body).toMatchObject({ items: [{ id, state: "cancelled" }], nextCursor: null });

    const gone = await get(one.GET as V1Handler, `/api/v1/discards/${randomUUID()}`, u.viewer.token, {
      id: randomUUID(),
    });
    expect(gone.status).toBe(404);
    await expectDocumented("get", "/api/v1/discards/{id}", gone.res, gone.body);
  }, 60_000);
});
