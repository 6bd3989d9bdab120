import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { refreshGroupSummary } from "@/lib/triage/index-store";
import { indexLetters, issueLetter } from "@/lib/triage/issue-fixtures.test-data";
import { auditRowsOf, callV1, expectDocumented, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import { GET as issuesGET } from "@/app/api/v1/issues/route";
import { POST as statePOST } from "@/app/api/v1/issues/state/route";
import { POST as notesPOST } from "@/app/api/v1/issues/notes/route";
import { POST as linksPOST } from "@/app/api/v1/issues/links/route";

/**
 * /api/v1/issues with real tokens on real Postgres: answers match the served document, changes
 * are audited with the token id as the use cases audit them for the pages, and a value the
 * default masking rules hide stays hidden in titles and notes for every token.
 */
process.env.NEXTAUTH_SECRET ||= "api-v1-issues-test-secret-0123456789abcdef0123";
const CONN = "local-rabbitmq";
const SECRET = "hunter2-Xw7";
const GROUP = { key: "api-login", label: `LoginFailed: password=${SECRET}` };
const H = (f: unknown) => f as V1Handler;
let users: Record<"viewer" | "operator", V1User>;
let queue = "";

beforeAll(async () => {
  users = await v1Users("v1-issues", ["viewer", "operator"]);
  queue = `v1-issues.${randomUUID().slice(0, 8)}.dlq`;
  await indexLetters(CONN, queue, [
    issueLetter("a", new Date(Date.now() - 60_000), GROUP),
    issueLetter("b", new Date(Date.now() - 30_000), { key: "api-other", label: "Other: failure" }),
  ]);
  await refreshGroupSummary(CONN, queue);
});

const ref = () => ({ connectionId: CONN, queue, groupKey: GROUP.key });

describe("/api/v1/issues", () => {
  it("lists issues across DLQs with their state, titles masked for the token's role", async () => {
    const out = await callV1(H(issuesGET), `/api/v1/issues?queue=${encodeURIComponent(queue)}&state=new,regressed`, {
      token: users.viewer.token,
    });
    expect(out.status, out.text).toBe(200);
    await expectDocumented("get", "/api/v1/issues", out.res, out.body);
    expect(out.body.total).toBe(2);
    expect(out.text).not.toContain(SECRET);
    expect(out.body.items.find((i: { groupKey: string }) => i.groupKey === GROUP.key)).toMatchObject({
      title: "LoginFailed: password=[hidden]",
      state: "new",
      brokerKind: "rabbitmq",
    });
    const bad = await callV1(H(issuesGET), "/api/v1/issues?state=open", { token: users.viewer.token });
    expect(bad.status).toBe(400);
  });

  it("an operator's token resolves a group, audited with the token id; a viewer's is refused", async () => {
    const refused = await callV1(H(statePOST), "/api/v1/issues/state", {
      token: users.viewer.token,
      json: { ...ref(), state: "acknowledged" },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "forbidden:issues:write" });

    const out = await callV1(H(statePOST), "/api/v1/issues/state", {
      token: users.operator.token,
      json: { ...ref(), state: "resolved", note: "in the next release" },
    });
    expect(out.status, out.text).toBe(200);
    await expectDocumented("post", "/api/v1/issues/state", out.res, out.body);
    expect(out.body).toMatchObject({ changed: true, issue: { state: "resolved", resolveNote: "in the next release" } });
    expect(out.text).not.toContain(SECRET);
    const audit = await auditRowsOf(out.requestId);
    expect(audit.map((r) => [r.action, r.outcome, r.target])).toEqual([["issue.state_change", "success", GROUP.key]]);
    expect(audit[0].details).toMatchObject({ from: "new", to: "resolved", tokenId: users.operator.tokenId });

    const ignore = await callV1(H(statePOST), "/api/v1/issues/state", {
      token: users.operator.token,
      json: { ...ref(), state: "ignored", ignore: { mode: "until_count", letters: 3 } },
    });
    expect(ignore.status, ignore.text).toBe(200);
    expect(ignore.body.issue.ignore).toMatchObject({ mode: "until_count", letters: 3, remaining: 3 });
    const missing = await callV1(H(statePOST), "/api/v1/issues/state", {
      token: users.operator.token,
      json: { ...ref(), groupKey: "no-such-group", state: "acknowledged" },
    });
    expect(missing.status).toBe(404);
  });

  it("notes and links: 201 with the entry, masked notes, http(s) links only", async () => {
    const note = await callV1(H(notesPOST), "/api/v1/issues/notes", {
      token: users.operator.token,
      json: { ...ref(), text: `rotated password=${SECRET}` },
    });
    expect(note.status, note.text).toBe(201);
    await expectDocumented("post", "/api/v1/issues/notes", note.res, note.body);
    expect(note.body).toMatchObject({ kind: "note", text: "rotated password=[hidden]" });
    expect(await auditRowsOf(note.requestId)).toMatchObject([{ action: "issue.note", outcome: "success" }]);

    const bad = await callV1(H(linksPOST), "/api/v1/issues/links", {
      token: users.operator.token,
      json: { ...ref(), url: "javascript:alert(1)" },
    });
    expect(bad.status).toBe(400);
    const link = await callV1(H(linksPOST), "/api/v1/issues/links", {
      token: users.operator.token,
      json: { ...ref(), url: "https://status.example.com/incidents/42" },
    });
    expect(link.status, link.text).toBe(201);
    await expectDocumented("post", "/api/v1/issues/links", link.res, link.body);
    expect(link.body).toMatchObject({
      link: { url: "https://status.example.com/incidents/42", host: "status.example.com" },
    });
  });
});
