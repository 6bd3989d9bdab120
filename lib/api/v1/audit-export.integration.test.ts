import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditRowsOf, callV1, expectDocumented, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import { GET as auditGET } from "@/app/api/v1/audit/route";
import { GET as exportGET } from "@/app/api/v1/audit/export/route";

/**
 * GET /api/v1/audit/export on real Postgres: the whole filtered log in each format, the same rows
 * as paging through GET /api/v1/audit, documented shapes, refusals and the export's own audit row.
 */
const PATH = "/api/v1/audit/export";
let users: Record<"viewer" | "operator", V1User>;
const handler = exportGET as V1Handler;

beforeAll(async () => {
  users = await v1Users("audit-export", ["viewer", "operator"] as const);
  // Rows to export: the viewer's refused reads of the audit log (one row each, under the viewer's email).
  for (let i = 0; i < 3; i++)
    expect((await callV1(auditGET as V1Handler, "/api/v1/audit", { token: users.viewer.token })).status).toBe(403);
});

afterAll(async () => {
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

const byViewer = () => `actor=${encodeURIComponent(users.viewer.actor.email!)}`;

/** Every row of the filter by paging the list operation, newest first: what each export must equal. */
async function pagedIds(filter: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await callV1(
      auditGET as V1Handler,
      `/api/v1/audit?${filter}&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      { token: users.operator.token },
    );
    expect(page.status).toBe(200);
    ids.push(...(page.body.items as Array<{ id: string }>).map((r) => r.id));
    cursor = page.body.nextCursor as string | null;
  } while (cursor);
  return ids;
}

describe("GET /api/v1/audit/export", () => {
  it("streams NDJSON: one documented row per line, the same rows as the pages, and audits the export with its filter and the token", async () => {
    const filter = `${byViewer()}&action=audit.view`;
    const expected = await pagedIds(filter);
    expect(expected.length).toBe(3);
    const { res, text, requestId } = await callV1(handler, `${PATH}?format=ndjson&${filter}`, {
      token: users.operator.token,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    expect(res.headers.get("content-disposition")).toMatch(/attachment; filename="audit-.*\.ndjson"/);
    const lines = text.split("\n");
    expect(lines.pop()).toBe("");
    const rows = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.id)).toEqual(expected);
    for (const row of rows) {
      expect(row).toMatchObject({ actorEmail: users.viewer.actor.email, action: "audit.view", outcome: "denied" });
      expect(typeof row.prevHash).toBe("string");
      await expectDocumented("get", PATH, res, row);
    }
    const audit = await auditRowsOf(requestId);
    expect(audit.map((r) => [r.action, r.outcome, r.actorId])).toEqual([
      ["audit.export", "success", users.operator.actor.id],
    ]);
    expect(audit[0].details).toMatchObject({
      tokenId: users.operator.tokenId,
      format: "ndjson",
      filter: { actor: users.viewer.actor.email, action: "audit.view" },
    });
  });

  it("streams CSV with a header line of the documented fields, and a JSON array of documented rows, with the same rows", async () => {
    const expected = await pagedIds(byViewer());
    const csv = await callV1(handler, `${PATH}?${byViewer()}`, { token: users.operator.token });
    expect(csv.status).toBe(200);
    expect(csv.res.headers.get("content-type")).toMatch(/^text\/csv/);
    await expectDocumented("get", PATH, csv.res, csv.text);
    const [header, ...body] = csv.text.trimEnd().split("\r\n");
    const columns = header.split(",");
    expect(columns).toEqual(
      expect.arrayContaining(["id", "at", "actorEmail", "action", "outcome", "details", "prevHash", "hash"]),
    );
    expect(body.map((line) => line.split(",")[columns.indexOf("id")])).toEqual(expected);

    const json = await callV1(handler, `${PATH}?format=json&${byViewer()}`, { token: users.operator.token });
    expect(json.status).toBe(200);
    const array = JSON.parse(json.text) as Array<{ id: string }>;
    expect(array.map((r) => r.id)).toEqual(expected);
    await expectDocumented("get", PATH, json.res, array);
  });

  it("answers an empty filter result with a header-only CSV and an empty NDJSON body", async () => {
    const none = `actor=nobody-${Date.now()}%40nowhere.test`;
    const csv = await callV1(handler, `${PATH}?format=csv&${none}`, { token: users.operator.token });
    expect(csv.text.split("\r\n").filter(Boolean)).toHaveLength(1);
    const nd = await callV1(handler, `${PATH}?format=ndjson&${none}`, { token: users.operator.token });
    expect(nd.status).toBe(200);
    expect(nd.text).toBe("");
  });

  it("refuses a viewer token before reading the query (403, audited audit.export denied), and answers a bad query with 400", async () => {
    const refused = await callV1(handler, `${PATH}?format=xml`, { token: users.viewer.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "forbidden:audit:read" });
    await expectDocumented("get", PATH, refused.res, refused.body);
    expect((await auditRowsOf(refused.requestId)).map((r) => [r.action, r.outcome])).toEqual([
      ["audit.export", "denied"],
    ]);

    const bad = await callV1(handler, `${PATH}?format=xml`, { token: users.operator.token });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/format/);
    await expectDocumented("get", PATH, bad.res, bad.body);
    const reversed = await callV1(handler, `${PATH}?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`, {
      token: users.operator.token,
    });
    expect(reversed.status).toBe(400);
    // Nothing was exported, so nothing was audited as an export.
    expect(await auditRowsOf(bad.requestId)).toEqual([]);
    expect(await auditRowsOf(reversed.requestId)).toEqual([]);
  });

  it("refuses a request without a token with 401 problem details", async () => {
    const { status, res, body } = await callV1(handler, PATH);
    expect(status).toBe(401);
    await expectDocumented("get", PATH, res, body);
  });
});
