import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/auth/session";
import { can } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db";
import { listSkips } from "@/lib/consumer-groups/skip";
import { listDiscards } from "@/lib/discard/use-cases";
import { JOB_KINDS, JOB_READ_PERMISSION } from "@/lib/jobs/use-cases";
import type { JobKind } from "@/lib/jobs/types";
import { listRedrives } from "@/lib/redrive/use-cases";
import { listSafeMoves } from "@/lib/safety/use-cases";
import { listScans } from "@/lib/triage/use-cases";
import { auditRowsOf, callV1, expectDocumented, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import * as jobs from "@/app/api/v1/jobs/route";
import * as one from "@/app/api/v1/jobs/[id]/route";
import * as ledger from "@/app/api/v1/jobs/[id]/ledger/route";

/**
 * The generic job routes on real Postgres: which role sees which kind, paging by cursor, and the
 * ledger of a kind that keeps none. Jobs are written straight into the jobs table, already finished,
 * so no worker picks them up; the redrive and discard routes' own tests run real jobs end to end.
 */
const CONN = "local-rabbitmq";
const ROLES = ["viewer", "operator", "admin"] as const;
let u: Record<(typeof ROLES)[number], V1User>;
const queue = `v1-jobs-${randomUUID().slice(0, 8)}.dlq`;
const created: Record<string, string> = {};
const meta = () => ({ requestId: `v1j-${randomUUID()}`, ip: "127.0.0.1" });

beforeAll(async () => {
  u = await v1Users("jobs-v1", ROLES);
  // One finished job of each kind, oldest first, plus one of a kind no rule names (shown to nobody).
  const t0 = Date.now() - 60_000;
  for (const [i, kind] of [...JOB_KINDS, "unlisted-kind"].entries()) {
    const job = await getDb().job.create({
      data: {
        kind,
        connectionId: CONN,
        queue,
        state: i % 2 ? "succeeded" : "cancelled",
        params: kind === "safe-move" ? { target: `${queue}.safe` } : {},
        createdAt: new Date(t0 + i * 1000),
        finishedAt: new Date(),
      },
    });
    created[kind] = job.id;
  }
});
afterAll(async () => {
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

/** Whether the kind's own list (the page's use case) lets this role through. */
async function ownListAllows(actor: Actor, kind: JobKind): Promise<boolean> {
  const ref = { connectionId: CONN, queue };
  const lists: Record<JobKind, () => Promise<unknown>> = {
    scan: () => listScans(actor, meta(), ref),
    redrive: () => listRedrives(actor, meta(), ref),
    discard: () => listDiscards(actor, meta(), ref),
    "safe-move": () => listSafeMoves(actor, meta(), ref),
    "group-skip": () => listSkips(actor, meta(), { connectionId: CONN }),
  };
  return lists[kind]().then(
    () => true,
    (e: { code?: string }) => {
      if (String(e.code).startsWith("forbidden:")) return false;
      throw e;
    },
  );
}

describe("background jobs through /api/v1", () => {
  it("shows each role exactly the kinds its role may read on the kinds' own pages; a kind no rule names to nobody", async () => {
    for (const role of ROLES) {
      const r = await callV1(
        jobs.GET as V1Handler,
        `/api/v1/jobs?connectionId=${CONN}&queue=${encodeURIComponent(queue)}&limit=100`,
        { token: u[role].token },
      );
      expect(r.status).toBe(200);
      await expectDocumented("get", "/api/v1/jobs", r.res, r.body);
      const kinds = r.body.items.map((j: { kind: string }) => j.kind).sort();
      const expected: string[] = [];
      for (const kind of JOB_KINDS) {
        // The rule agrees with the kind's own list, and the API applies the rule.
        const allowed = await ownListAllows(u[role].actor, kind);
        expect(can(role, JOB_READ_PERMISSION[kind]), `${role} ${kind}`).toBe(allowed);
        if (allowed) expected.push(kind);
      }
      expect(kinds).toEqual(expected.sort());
      expect(kinds).not.toContain("unlisted-kind");

      for (const kind of JOB_KINDS) {
        const id = created[kind];
        const g = await callV1(one.GET as V1Handler, `/api/v1/jobs/${id}`, { token: u[role].token, params: { id } });
        await expectDocumented("get", "/api/v1/jobs/{id}", g.res, g.body);
        if (expected.includes(kind)) {
          expect(g.status).toBe(200);
          expect(g.body).toMatchObject({ id, kind, connectionId: CONN, queue });
        } else {
          // Not told apart from an unknown id; the refusal is on record.
          expect(g.status).toBe(404);
          expect((await auditRowsOf(g.requestId)).map((a) => [a.action, a.outcome])).toEqual([["job.view", "denied"]]);
        }
      }
      const hidden = created["unlisted-kind"];
      const h = await callV1(one.GET as V1Handler, `/api/v1/jobs/${hidden}`, {
        token: u[role].token,
        params: { id: hidden },
      });
      expect(h.status).toBe(404);
      await expectDocumented("get", "/api/v1/jobs/{id}", h.res, h.body);
    }
  });

  it("pages newest first by cursor, filters by kind and state, and refuses a bad cursor", async () => {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const r: Awaited<ReturnType<typeof callV1>> = await callV1(
        jobs.GET as V1Handler,
        `/api/v1/jobs?queue=${encodeURIComponent(queue)}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        { token: u.admin.token },
      );
      expect(r.status).toBe(200);
      await expectDocumented("get", "/api/v1/jobs", r.res, r.body);
      ids.push(...r.body.items.map((j: { id: string }) => j.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    // Newest first: the kinds in reverse order of creation, each once.
    expect(ids).toEqual([...JOB_KINDS].reverse().map((k) => created[k]));

    const redrivesOnly = await callV1(
      jobs.GET as V1Handler,
      `/api/v1/jobs?queue=${encodeURIComponent(queue)}&kind=redrive`,
      { token: u.viewer.token },
    );
    expect(redrivesOnly.body.items.map((j: { id: string }) => j.id)).toEqual([created.redrive]);
    const cancelled = await callV1(
      jobs.GET as V1Handler,
      `/api/v1/jobs?queue=${encodeURIComponent(queue)}&state=cancelled`,
      { token: u.viewer.token },
    );
    expect(cancelled.body.items.every((j: { state: string }) => j.state === "cancelled")).toBe(true);
    expect(cancelled.body.items.length).toBeGreaterThan(0);

    const bad = await callV1(jobs.GET as V1Handler, `/api/v1/jobs?cursor=${encodeURIComponent("bm90IGEgY3Vyc29y")}`, {
      token: u.viewer.token,
    });
    expect(bad.status).toBe(400);
    await expectDocumented("get", "/api/v1/jobs", bad.res, bad.body);
    expect(bad.body).toMatchObject({ code: "bad_request:cursor" });
    const badKind = await callV1(jobs.GET as V1Handler, `/api/v1/jobs?kind=everything`, { token: u.viewer.token });
    expect(badKind.status).toBe(400);
  });

  it("answers 404 for the ledger of a kind that keeps none", async () => {
    const id = created.scan;
    const r = await callV1(ledger.GET as V1Handler, `/api/v1/jobs/${id}/ledger`, {
      token: u.operator.token,
      params: { id },
    });
    expect(r.status).toBe(404);
    await expectDocumented("get", "/api/v1/jobs/{id}/ledger", r.res, r.body);
    expect(r.body).toMatchObject({ code: "not_found:ledger" });
  });
});
