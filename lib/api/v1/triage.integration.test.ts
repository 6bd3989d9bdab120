import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { ELASTICMQ_ENDPOINT, SqsKit } from "@/lib/brokers/sqs/test-kit";
import { jobStore } from "@/lib/jobs/store";
import { loadMaskingConfig, saveMaskingConfig } from "@/lib/masking/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { auditRowsOf, callV1, expectDocumented, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import { NO_JOB } from "@/test/matrix-kit";
import { GET as dlqLettersGET } from "@/app/api/v1/dlqs/[connectionId]/[queue]/letters/route";
import { GET as dlqLetterGET } from "@/app/api/v1/dlqs/[connectionId]/[queue]/letters/[letterId]/route";
import { GET as scansGET, POST as scansPOST } from "@/app/api/v1/scans/route";
import { GET as scanGET } from "@/app/api/v1/scans/[id]/route";
import { POST as scanCancelPOST } from "@/app/api/v1/scans/[id]/cancel/route";
import { GET as groupsGET } from "@/app/api/v1/groups/route";
import { GET as lettersGET } from "@/app/api/v1/letters/route";

/**
 * The read side of /api/v1 (letters, scans, groups, filtered sets) on real brokers and Postgres:
 * DLQs filled by RabbitMQ's own dead-lettering (and ElasticMQ's redrive policy), real tokens per
 * role, every answer checked against the served document. Letters carry a password, a card number
 * and Basic credentials that the default masking rules hide from every role: no answer to a
 * viewer's token may hold them, and no filter may tell a right guess of them from a wrong one.
 */
process.env.NEXTAUTH_SECRET ||= "api-v1-triage-test-secret-0123456789abcdef0123";
const RABBIT = "local-rabbitmq";
const PASSWORD = "hunter2-Vq9x";
const CARD = "4111111111111111";
const BASIC = Buffer.from(`jane:${PASSWORD}`).toString("base64");
const N = 7;
const enc = (s: string) => new TextEncoder().encode(s);
const H = (f: unknown) => f as V1Handler;

const kit = new RabbitKit();
const sqsKit = new SqsKit(ELASTICMQ_ENDPOINT);
let users: Record<"viewer" | "operator", V1User>;
let dlq = "";

const letterOf = (i: number) => ({
  body: enc(JSON.stringify({ order: i, user: "jane", password: PASSWORD, card: CARD })),
  messageId: `v1t-${i}`,
  headers: {
    "x-exception-class": "com.acme.LoginFailed",
    "x-exception-message": `login refused password=${PASSWORD} card ${CARD} attempt ${i}`,
    authorization: `Basic ${BASIC}`,
    "x-tenant": "acme",
  },
});

/** The secret in every form a leak could take. */
function expectNoSecret(text: string) {
  for (const s of [PASSWORD, CARD, BASIC]) expect(text).not.toContain(s);
}

/** Runs one queued scan to its end as the console's worker would, while the test polls it over the API. */
function runScan(jobId: string) {
  const worker = new JobWorker({
    handlers: { scan: scanHandler() },
    owner: `v1t-${randomUUID().slice(0, 6)}`,
    leaseMs: 30_000,
    scope: { jobIds: [jobId] },
  });
  return worker.runOnce().then(
    (job) => ({ job, error: null as unknown }),
    (error: unknown) => ({ job: null, error }),
  );
}

async function pollScan(id: string, token: string) {
  for (let i = 0; i < 100; i++) {
    const r = await callV1(H(scanGET), `/api/v1/scans/${id}`, { token, params: { id } });
    expect(r.status).toBe(200);
    if (["succeeded", "failed", "cancelled"].includes(r.body.state)) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`scan ${id} did not end`);
}

const dlqPath = (conn: string, queue: string) =>
  `/api/v1/dlqs/${encodeURIComponent(conn)}/${encodeURIComponent(queue)}/letters`;
const of = (conn: string, queue: string) =>
  `connectionId=${encodeURIComponent(conn)}&queue=${encodeURIComponent(queue)}`;

beforeAll(async () => {
  users = await v1Users("v1-triage", ["viewer", "operator"] as const);
  ({ dlq } = await kit.dlqByReject(Array.from({ length: N }, (_, i) => letterOf(i))));
});

afterAll(async () => {
  await kit.cleanup();
  await sqsKit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

describe("letters of a DLQ, read from the broker", () => {
  it("pages by cursor: two pages, no overlap, every letter seen, failure fields masked for a viewer", async () => {
    const first = await callV1(H(dlqLettersGET), `${dlqPath(RABBIT, dlq)}?limit=4`, {
      token: users.viewer.token,
      params: { connectionId: RABBIT, queue: dlq },
    });
    expect(first.status, first.text).toBe(200);
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters", first.res, first.body);
    expect(first.body.items).toHaveLength(4);
    expect(first.body.depth).toBe(N);
    expect(typeof first.body.nextCursor).toBe("string");
    const second = await callV1(H(dlqLettersGET), `${dlqPath(RABBIT, dlq)}?limit=4&cursor=${first.body.nextCursor}`, {
      token: users.viewer.token,
      params: { connectionId: RABBIT, queue: dlq },
    });
    expect(second.status, second.text).toBe(200);
    expect(second.body.items).toHaveLength(N - 4);
    expect(second.body.nextCursor).toBeNull();
    const ids = [...first.body.items, ...second.body.items].map((l: { messageId: string }) => l.messageId);
    expect(new Set(ids).size).toBe(N);
    expect([...ids].sort()).toEqual(Array.from({ length: N }, (_, i) => `v1t-${i}`).sort());
    expect(first.body.items[0].failure).toMatchObject({ exceptionClass: "com.acme.LoginFailed", reason: "rejected" });
    expectNoSecret(first.text + second.text);
    const rows = await auditRowsOf(first.requestId);
    expect(rows.map((r) => [r.action, r.outcome])).toEqual([["dlq.open", "success"]]);
    expect(rows[0].details).toMatchObject({ tokenId: users.viewer.tokenId, read: true, letters: 4 });
  });

  it("answers a bad cursor with 400 and a DLQ that does not exist with 404, as documented", async () => {
    const bad = await callV1(H(dlqLettersGET), `${dlqPath(RABBIT, dlq)}?cursor=not-a-cursor`, {
      token: users.viewer.token,
      params: { connectionId: RABBIT, queue: dlq },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: "bad_request:cursor" });
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters", bad.res, bad.body);
    const missing = `v1t-missing-${randomUUID().slice(0, 8)}`;
    const none = await callV1(H(dlqLettersGET), dlqPath(RABBIT, missing), {
      token: users.viewer.token,
      params: { connectionId: RABBIT, queue: missing },
    });
    expect(none.status).toBe(404);
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters", none.res, none.body);
  });

  it("opens one letter for a viewer: headers, failure fields and payload view, with no secret in any of it", async () => {
    const page = await callV1(H(dlqLettersGET), `${dlqPath(RABBIT, dlq)}?limit=1`, {
      token: users.viewer.token,
      params: { connectionId: RABBIT, queue: dlq },
    });
    const letterId = page.body.items[0].id as string;
    const r = await callV1(H(dlqLetterGET), `${dlqPath(RABBIT, dlq)}/${encodeURIComponent(letterId)}`, {
      token: users.viewer.token,
      params: { connectionId: RABBIT, queue: dlq, letterId },
    });
    expect(r.status, r.text).toBe(200);
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters/{letterId}", r.res, r.body);
    expect(r.body).toMatchObject({ source: "broker", id: letterId, messageId: page.body.items[0].messageId });
    expect(r.body.headers.map((h: { name: string }) => h.name)).toEqual(
      expect.arrayContaining(["authorization", "x-tenant"]),
    );
    expect(r.body.payload?.kind).toBe("json");
    expect(r.body.payload.text).toContain('"user": "jane"');
    expect(r.body.masking.maskedCount).toBeGreaterThan(0);
    expectNoSecret(r.text);
    const rows = await auditRowsOf(r.requestId);
    expect(rows.map((x) => [x.action, x.outcome, x.target])).toEqual([["letter.view", "success", letterId]]);

    const gone = await callV1(H(dlqLetterGET), `${dlqPath(RABBIT, dlq)}/m-bm9uZQ`, {
      token: users.viewer.token,
      params: { connectionId: RABBIT, queue: dlq, letterId: "m-bm9uZQ" },
    });
    expect(gone.status).toBe(404);
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters/{letterId}", gone.res, gone.body);
  });
});

describe("scans, groups and the filtered set", () => {
  let scanId = "";

  it("starts a scan (202), answers the active one with 200, and polls it to done", async () => {
    const refused = await callV1(H(scansPOST), "/api/v1/scans", {
      token: users.viewer.token,
      json: { connectionId: RABBIT, queue: dlq },
    });
    expect(refused.status).toBe(403);
    await expectDocumented("post", "/api/v1/scans", refused.res, refused.body);

    const started = await callV1(H(scansPOST), "/api/v1/scans", {
      token: users.operator.token,
      json: { connectionId: RABBIT, queue: dlq },
    });
    expect(started.status, started.text).toBe(202);
    await expectDocumented("post", "/api/v1/scans", started.res, started.body);
    expect(started.body).toMatchObject({
      alreadyActive: false,
      scan: { state: "queued", queue: dlq, acceptRisk: false },
    });
    scanId = started.body.scan.id;
    expect((await auditRowsOf(started.requestId)).map((x) => [x.action, x.outcome])).toEqual([
      ["triage.scan_start", "success"],
    ]);

    const again = await callV1(H(scansPOST), "/api/v1/scans", {
      token: users.operator.token,
      json: { connectionId: RABBIT, queue: dlq },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ alreadyActive: true, scan: { id: scanId } });
    await expectDocumented("post", "/api/v1/scans", again.res, again.body);

    const running = runScan(scanId);
    const done = await pollScan(scanId, users.viewer.token);
    expect(await running).toMatchObject({ error: null, job: { id: scanId } });
    await expectDocumented("get", "/api/v1/scans/{id}", done.res, done.body);
    expect(done.body).toMatchObject({ id: scanId, state: "succeeded", progress: { read: N } });

    const unknown = await callV1(H(scanGET), `/api/v1/scans/${NO_JOB}`, {
      token: users.viewer.token,
      params: { id: NO_JOB },
    });
    expect(unknown.status).toBe(404);
    await expectDocumented("get", "/api/v1/scans/{id}", unknown.res, unknown.body);
    const bad = await callV1(H(scansPOST), "/api/v1/scans", {
      token: users.operator.token,
      json: { connectionId: RABBIT },
    });
    expect(bad.status).toBe(400);
    await expectDocumented("post", "/api/v1/scans", bad.res, bad.body);
  });

  it("cancels a queued scan, and refuses a viewer's cancel", async () => {
    const started = await callV1(H(scansPOST), "/api/v1/scans", {
      token: users.operator.token,
      json: { connectionId: RABBIT, queue: dlq },
    });
    expect(started.status).toBe(202);
    const id = started.body.scan.id as string;
    const refused = await callV1(H(scanCancelPOST), `/api/v1/scans/${id}/cancel`, {
      token: users.viewer.token,
      method: "POST",
      params: { id },
    });
    expect(refused.status).toBe(403);
    await expectDocumented("post", "/api/v1/scans/{id}/cancel", refused.res, refused.body);
    const r = await callV1(H(scanCancelPOST), `/api/v1/scans/${id}/cancel`, {
      token: users.operator.token,
      method: "POST",
      params: { id },
    });
    expect(r.status, r.text).toBe(200);
    await expectDocumented("post", "/api/v1/scans/{id}/cancel", r.res, r.body);
    expect(r.body).toMatchObject({ id, state: "cancelled", cancelRequested: true });
    expect((await jobStore().get(id))?.state).toBe("cancelled");
    expect((await auditRowsOf(r.requestId)).map((x) => [x.action, x.outcome])).toEqual([
      ["triage.scan_cancel", "success"],
    ]);
    const none = await callV1(H(scanCancelPOST), `/api/v1/scans/${NO_JOB}/cancel`, {
      token: users.operator.token,
      method: "POST",
      params: { id: NO_JOB },
    });
    expect(none.status).toBe(404);
    await expectDocumented("post", "/api/v1/scans/{id}/cancel", none.res, none.body);
  });

  it("lists the DLQ's scans newest first by cursor", async () => {
    const url = (extra: string) => `/api/v1/scans?${of(RABBIT, dlq)}&limit=1${extra}`;
    const first = await callV1(H(scansGET), url(""), { token: users.viewer.token });
    expect(first.status).toBe(200);
    await expectDocumented("get", "/api/v1/scans", first.res, first.body);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.items[0].state).toBe("cancelled");
    const second = await callV1(H(scansGET), url(`&cursor=${first.body.nextCursor}`), { token: users.viewer.token });
    expect(second.body.items.map((s: { id: string }) => s.id)).toEqual([scanId]);
    expect(second.body.nextCursor).toBeNull();
    const bad = await callV1(H(scansGET), url(`&cursor=${NO_JOB}`), { token: users.viewer.token });
    expect(bad.status).toBe(400);
    await expectDocumented("get", "/api/v1/scans", bad.res, bad.body);
  });

  it("reads the groups, masked for a viewer", async () => {
    const r = await callV1(H(groupsGET), `/api/v1/groups?${of(RABBIT, dlq)}`, { token: users.viewer.token });
    expect(r.status, r.text).toBe(200);
    await expectDocumented("get", "/api/v1/groups", r.res, r.body);
    expect(r.body).toMatchObject({ by: "group", total: N, lastScan: { state: "cancelled" } });
    expect(r.body.groups).toHaveLength(1);
    expect(r.body.groups[0]).toMatchObject({ exceptionClass: "com.acme.LoginFailed", count: N });
    expectNoSecret(r.text);
    const byHeader = await callV1(H(groupsGET), `/api/v1/groups?${of(RABBIT, dlq)}&by=header:authorization`, {
      token: users.viewer.token,
    });
    expect(byHeader.status).toBe(200);
    await expectDocumented("get", "/api/v1/groups", byHeader.res, byHeader.body);
    expect(byHeader.body.groups).toEqual([expect.objectContaining({ count: N })]);
    expectNoSecret(byHeader.text);
    const bad = await callV1(H(groupsGET), `/api/v1/groups?${of(RABBIT, dlq)}&by=colour`, {
      token: users.viewer.token,
    });
    expect(bad.status).toBe(400);
    await expectDocumented("get", "/api/v1/groups", bad.res, bad.body);
  });

  it("reads the filtered set by cursor: two pages, no overlap, every letter, the set's count", async () => {
    const url = (extra: string) => `/api/v1/letters?${of(RABBIT, dlq)}&class=com.acme.LoginFailed&limit=4${extra}`;
    const first = await callV1(H(lettersGET), url(""), { token: users.viewer.token });
    expect(first.status, first.text).toBe(200);
    await expectDocumented("get", "/api/v1/letters", first.res, first.body);
    expect(first.body).toMatchObject({ count: N });
    expect(first.body.items).toHaveLength(4);
    const second = await callV1(H(lettersGET), url(`&cursor=${first.body.nextCursor}`), { token: users.viewer.token });
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(N - 4);
    expect(second.body.nextCursor).toBeNull();
    const ids = [...first.body.items, ...second.body.items].map((l: { messageId: string }) => l.messageId);
    expect([...ids].sort()).toEqual(Array.from({ length: N }, (_, i) => `v1t-${i}`).sort());
    expectNoSecret(first.text + second.text);
    const other = await callV1(H(lettersGET), `/api/v1/letters?${of(RABBIT, dlq)}&class=com.acme.Other`, {
      token: users.viewer.token,
    });
    expect(other.body).toMatchObject({ count: 0, items: [], nextCursor: null });
    const bad = await callV1(H(lettersGET), `/api/v1/letters?${of(RABBIT, dlq)}&from=yesterday`, {
      token: users.viewer.token,
    });
    expect(bad.status).toBe(400);
    await expectDocumented("get", "/api/v1/letters", bad.res, bad.body);
  });

  it("cannot be used to learn a masked value: a right guess answers as a wrong one", async () => {
    const ask = (extra: string) =>
      callV1(H(lettersGET), `/api/v1/letters?${of(RABBIT, dlq)}${extra}`, { token: users.viewer.token });
    const shape = (r: Awaited<ReturnType<typeof ask>>) => ({
      status: r.status,
      count: r.body.count,
      items: r.body.items,
      code: r.body.code,
      detail: r.body.detail,
    });
    for (const [right, wrong] of [
      [PASSWORD, "hunter3-Vq9x"],
      [PASSWORD.slice(0, 4), "hunz"],
      [`password=${PASSWORD}`, "password=hunter3-Vq9x"],
      [CARD, "4111111111111112"],
    ]) {
      const a = await ask(`&q=${encodeURIComponent(right)}`);
      const b = await ask(`&q=${encodeURIComponent(wrong)}`);
      expect(a.status).toBe(200);
      expect(shape(a)).toEqual(shape(b));
      expect(a.body.count).toBe(0);
    }
    // What the viewer does see is found: the text around the secret.
    expect((await ask(`&q=${encodeURIComponent("login refused")}`)).body.count).toBe(N);
    // A header filter on a value masking hides is refused alike for the right and a wrong value.
    const h1 = await ask(`&header=${encodeURIComponent(`authorization:Basic ${BASIC}`)}`);
    const h2 = await ask(`&header=${encodeURIComponent("authorization:Basic d3Jvbmc6Z3Vlc3M=")}`);
    expect(h1.status).toBe(403);
    expect(shape(h1)).toEqual(shape(h2));
    expect(h1.body.code).toBe("forbidden:filter");
    await expectDocumented("get", "/api/v1/letters", h1.res, h1.body);
    expectNoSecret(h1.text);
  });
});

describe("a DLQ whose reads cost letters (RabbitMQ quorum queue, delivery limit 3)", () => {
  let risky = "";
  beforeAll(async () => {
    ({ dlq: risky } = await kit.dlqByReject(
      Array.from({ length: 3 }, (_, i) => ({ body: enc(`{"n":${i}}`), messageId: `v1t-risky-${i}` })),
      { "x-queue-type": "quorum", "x-delivery-limit": 3 },
    ));
  });
  const params = () => ({ connectionId: RABBIT, queue: risky });

  it("is never read by a page of letters, not even when a script claims to accept the risk: 409, and every letter is still there", async () => {
    const r = await callV1(H(dlqLettersGET), dlqPath(RABBIT, risky), { token: users.operator.token, params: params() });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ code: "confirmation_required:read" });
    expect(r.body.detail).toContain("POST /api/v1/scans");
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters", r.res, r.body);
    expect(
      (await auditRowsOf(r.requestId)).map((x) => [x.action, x.outcome, (x.details as { read?: boolean }).read]),
    ).toEqual([["dlq.open", "success", false]]);

    // The page has no "read it anyway", and neither has the API: each page would be a read from the
    // head that spends deliveries. An unknown query parameter changes nothing.
    for (let i = 0; i < 4; i++) {
      const again = await callV1(H(dlqLettersGET), `${dlqPath(RABBIT, risky)}?acceptRisk=true`, {
        token: users.operator.token,
        params: params(),
      });
      expect(again.status).toBe(409);
      expect((await auditRowsOf(again.requestId)).map((x) => (x.details as { read?: boolean }).read)).toEqual([false]);
    }
    // Four "confirmed" reads past a delivery limit of 3 would have dead-lettered or dropped them: all 3 are still in the DLQ.
    expect(await kit.depth(risky)).toBe(3);
  });

  it("scans only with the risk accepted, then serves a letter from the snapshot without reading the broker", async () => {
    const refused = await callV1(H(scansPOST), "/api/v1/scans", { token: users.operator.token, json: params() });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "confirmation_required:read" });
    await expectDocumented("post", "/api/v1/scans", refused.res, refused.body);

    const before = await callV1(H(dlqLetterGET), `${dlqPath(RABBIT, risky)}/anything`, {
      token: users.viewer.token,
      params: { ...params(), letterId: "anything" },
    });
    expect(before.status).toBe(409);
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters/{letterId}", before.res, before.body);

    const started = await callV1(H(scansPOST), "/api/v1/scans", {
      token: users.operator.token,
      json: { ...params(), acceptRisk: true },
    });
    expect(started.status, started.text).toBe(202);
    expect(started.body.scan.acceptRisk).toBe(true);
    const running = runScan(started.body.scan.id);
    expect((await pollScan(started.body.scan.id, users.operator.token)).body.state).toBe("succeeded");
    expect((await running).error).toBeNull();

    const set = await callV1(H(lettersGET), `/api/v1/letters?${of(RABBIT, risky)}`, { token: users.viewer.token });
    expect(set.body.count).toBe(3);
    const letterId = set.body.items[0].letterId as string;
    const r = await callV1(H(dlqLetterGET), `${dlqPath(RABBIT, risky)}/${encodeURIComponent(letterId)}`, {
      token: users.viewer.token,
      params: { ...params(), letterId },
    });
    expect(r.status, r.text).toBe(200);
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters/{letterId}", r.res, r.body);
    expect(r.body).toMatchObject({ source: "snapshot", id: letterId, messageId: set.body.items[0].messageId });
    expect((await auditRowsOf(r.requestId))[0].details).toMatchObject({ read: false, fromSnapshot: true });

    // With a snapshot on record, the refusal of a page points to it.
    const page = await callV1(H(dlqLettersGET), dlqPath(RABBIT, risky), {
      token: users.viewer.token,
      params: params(),
    });
    expect(page.status).toBe(409);
    expect(page.body.detail).toContain("GET /api/v1/letters?");
  });
});

describe("an SQS DLQ (ElasticMQ)", () => {
  it("pages its letters, opens one, and scans it", async () => {
    const SQS = "local-sqs";
    const { dlq: q, messageIds } = await sqsKit.dlqByRedrive(
      Array.from({ length: 3 }, (_, i) => ({ body: enc(`{"invoice":${i}}`) })),
    );
    const page = await callV1(H(dlqLettersGET), `${dlqPath(SQS, q)}?limit=10`, {
      token: users.viewer.token,
      params: { connectionId: SQS, queue: q },
    });
    expect(page.status, page.text).toBe(200);
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters", page.res, page.body);
    expect(page.body.items.map((l: { messageId: string }) => l.messageId).sort()).toEqual([...messageIds].sort());
    expect(page.body.nextCursor).toBeNull();
    const letterId = page.body.items[0].id as string;
    const one = await callV1(H(dlqLetterGET), `${dlqPath(SQS, q)}/${encodeURIComponent(letterId)}`, {
      token: users.viewer.token,
      params: { connectionId: SQS, queue: q, letterId },
    });
    expect(one.status, one.text).toBe(200);
    await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters/{letterId}", one.res, one.body);
    expect(one.body.payload.text).toContain('"invoice"');

    const started = await callV1(H(scansPOST), "/api/v1/scans", {
      token: users.operator.token,
      json: { connectionId: SQS, queue: q },
    });
    expect(started.status, started.text).toBe(202);
    const running = runScan(started.body.scan.id);
    expect((await pollScan(started.body.scan.id, users.viewer.token)).body).toMatchObject({
      state: "succeeded",
      progress: { read: 3 },
    });
    expect((await running).error).toBeNull();
    const set = await callV1(H(lettersGET), `/api/v1/letters?${of(SQS, q)}`, { token: users.viewer.token });
    expect(set.body.count).toBe(3);

    // Marked sensitive, the DLQ's payloads are withheld from a viewer's token (not even masked), and still shown masked to an operator's.
    const current = await loadMaskingConfig();
    await saveMaskingConfig(
      { rules: current.rules, sensitive: [...current.sensitive, { connectionId: SQS, pattern: q }] },
      "v1 triage test",
    );
    try {
      const url = `${dlqPath(SQS, q)}/${encodeURIComponent(letterId)}`;
      const viewer = await callV1(H(dlqLetterGET), url, {
        token: users.viewer.token,
        params: { connectionId: SQS, queue: q, letterId },
      });
      expect(viewer.status).toBe(200);
      await expectDocumented("get", "/api/v1/dlqs/{connectionId}/{queue}/letters/{letterId}", viewer.res, viewer.body);
      expect(viewer.body).toMatchObject({ payload: null, masking: { sensitive: true } });
      expect(viewer.text).not.toContain("invoice");
      const operator = await callV1(H(dlqLetterGET), url, {
        token: users.operator.token,
        params: { connectionId: SQS, queue: q, letterId },
      });
      expect(operator.body.payload.text).toContain('"invoice"');
    } finally {
      const now = await loadMaskingConfig();
      await saveMaskingConfig(
        { rules: now.rules, sensitive: now.sensitive.filter((s) => s.pattern !== q) },
        "v1 triage test",
      );
    }
  });
});
