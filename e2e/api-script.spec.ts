import { test, expect, request as playwrightRequest, type APIRequestContext } from "@playwright/test";
import { deadLetterQueues, runId } from "./dead-letters";
import { DEMO, E2E_USERS, loadSession } from "./fixtures";

/**
 * A runbook script, end to end against the production server: an operator mints a
 * personal API token on the profile page, and from then on everything goes over HTTP with that
 * token alone (no cookie, no browser): find the DLQ, scan it, read its groups, plan a redrive of
 * the group, be refused a start with a count it did not review (and nothing moves), start it with
 * the reviewed count, poll to the sample's verdict (inconclusive, with the evidence: nobody consumes
 * the work queue), be refused a plain start of the rest, continue anyway with a reason, poll to the
 * end, read the ledger by cursor and the audit log. The letters are then really back in the work queue.
 */
const RUN = runId();
const queues = deadLetterQueues("apiscript", RUN);
const { work: WORK, dlq: DLQ } = queues;
const N = 9;
const SAMPLE = 2;
const CONNECTION = DEMO.connectionId;
const BASE = `http://127.0.0.1:${process.env.E2E_PORT ?? 3100}`;

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await queues.fill(
    Array.from({ length: N }, (_, i) => ({
      content: Buffer.from(JSON.stringify({ invoiceId: `inv-${RUN}-${i}` })),
      options: {
        persistent: true,
        messageId: `inv-${RUN}-${i}`,
        contentType: "application/json",
        headers: {
          "x-exception-message": `Connection refused to ledger-db (attempt ${i})`,
          "x-exception-stacktrace":
            "java.net.ConnectException: Connection refused\n\tat com.acme.billing.Ledger.post(Ledger.java:42)",
        },
      },
    })),
  );
});

test.afterAll(() => queues.remove());

/** Polls a GET until `done` holds for its JSON, or fails with the last answer. */
async function pollJson<T>(
  api: APIRequestContext,
  url: string,
  done: (body: T) => boolean,
  timeoutMs = 90_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: T | null = null;
  while (Date.now() < until) {
    const res = await api.get(url);
    expect(res.status(), await res.text()).toBe(200);
    last = (await res.json()) as T;
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not get there in ${timeoutMs} ms; last answer: ${JSON.stringify(last).slice(0, 500)}`);
}

test("a script with an operator's token scans, plans, samples and redrives a group, then reads the ledger and the audit log", async ({
  page,
}) => {
  test.setTimeout(180_000);

  // The one browser step: the token is made where a user makes it, and shown once.
  await loadSession(page, "operator");
  await page.goto("/profile");
  await page.getByTestId("token-name").fill(`runbook ${RUN}`);
  await page.getByTestId("token-role").selectOption("operator");
  await page.getByTestId("create-token-submit").click();
  const token = (await page.getByTestId("new-token-value").textContent())!.trim();
  expect(token).toMatch(/^dlqc_/);
  await page.close();

  // From here on: HTTP with the token only. A fresh request context holds no session cookie.
  const api = await playwrightRequest.newContext({
    baseURL: BASE,
    extraHTTPHeaders: { Authorization: `Bearer ${token}`, "X-Request-Id": `script-${RUN}` },
  });
  const anonymous = await playwrightRequest.newContext({ baseURL: BASE });
  try {
    expect((await anonymous.get("/api/v1/dlqs")).status()).toBe(401);

    // Find the DLQ with its depth.
    const listing = (await (await api.get("/api/v1/dlqs")).json()) as {
      connections: Array<{ connectionId: string; dlqs: Array<{ name: string; depth: number | null }> }>;
    };
    const dlq = listing.connections.find((c) => c.connectionId === CONNECTION)?.dlqs.find((d) => d.name === DLQ);
    expect(dlq, `${DLQ} in GET /api/v1/dlqs`).toBeDefined();
    expect(dlq!.depth).toBe(N);

    // Scan it and wait for the scan.
    const started = await api.post("/api/v1/scans", { data: { connectionId: CONNECTION, queue: DLQ } });
    expect(started.status(), await started.text()).toBe(202);
    const scanId = ((await started.json()) as { scan: { id: string } }).scan.id;
    const scan = await pollJson<{ state: string }>(api, `/api/v1/scans/${scanId}`, (s) =>
      ["succeeded", "failed", "cancelled"].includes(s.state),
    );
    expect(scan.state).toBe("succeeded");

    // Its one group.
    const q = `connectionId=${encodeURIComponent(CONNECTION)}&queue=${encodeURIComponent(DLQ)}`;
    const groups = (await (await api.get(`/api/v1/groups?${q}`)).json()) as {
      groups: Array<{ groupKey: string; count: number; exceptionClass: string | null }>;
    };
    expect(groups.groups).toHaveLength(1);
    const [group] = groups.groups;
    expect(group).toMatchObject({ count: N, exceptionClass: "java.net.ConnectException" });

    // Plan; a start with another count than the plan's is refused and moves nothing.
    const selection = { kind: "group", groupKey: group.groupKey };
    const planRes = await api.post("/api/v1/redrives/plan", {
      data: { connectionId: CONNECTION, queue: DLQ, selection },
    });
    expect(planRes.status(), await planRes.text()).toBe(200);
    const plan = (await planRes.json()) as { count: number };
    expect(plan.count).toBe(N);
    const body = {
      connectionId: CONNECTION,
      queue: DLQ,
      selection,
      fix: `ledger-db connection pool raised (${RUN})`,
      sample: { count: SAMPLE },
      watchSeconds: 2,
      rate: 50,
    };
    const stale = await api.post("/api/v1/redrives", { data: { ...body, confirmedCount: N + 5 } });
    expect(stale.status()).toBe(409);
    expect(stale.headers()["content-type"]).toBe("application/problem+json");
    expect(await stale.json()).toMatchObject({ status: 409, code: "conflict:count", count: N });
    expect(await queues.depth(DLQ)).toBe(N);
    expect(await queues.depth(WORK)).toBe(0);

    // Start with the reviewed count: stage 1, the sample.
    const start = await api.post("/api/v1/redrives", { data: { ...body, confirmedCount: plan.count } });
    expect(start.status(), await start.text()).toBe(202);
    const redriveId = ((await start.json()) as { id: string }).id;
    // The stage and verdict are written a moment before the job settles into "paused": a script waits
    // for `bulk.ready` (or `bulk.needsOverride`, or an end), as the document says.
    const sampled = await pollJson<{
      redrive: {
        state: string;
        stage: string;
        sampleVerdict: string | null;
        sampleEvidence: Array<{ target: string; state: string; text: string }> | null;
        bulk: { ready: boolean; needsOverride: boolean; needsReason: boolean };
      };
    }>(
      api,
      `/api/v1/redrives/${redriveId}`,
      (r) =>
        r.redrive.bulk.ready ||
        r.redrive.bulk.needsOverride ||
        ["succeeded", "failed", "cancelled"].includes(r.redrive.state),
    );
    // Nobody consumes the work queue: none came back, but nothing shows a reader took them.
    expect(sampled.redrive).toMatchObject({
      stage: "awaiting_bulk",
      sampleVerdict: "inconclusive",
      bulk: { ready: true, needsOverride: false, needsReason: true },
    });
    expect(sampled.redrive.sampleEvidence).toEqual([expect.objectContaining({ target: WORK, state: "no_reader" })]);
    expect(sampled.redrive.sampleEvidence?.[0].text).toContain(`No consumer on queue "${WORK}"`);
    expect(await queues.depth(WORK)).toBe(SAMPLE);

    // Stage 2 without a reason is refused and moves nothing; with one, the rest goes to the end.
    const plain = await api.post(`/api/v1/redrives/${redriveId}/bulk`, { data: {} });
    expect(plain.status()).toBe(400);
    expect(plain.headers()["content-type"]).toBe("application/problem+json");
    expect(await plain.json()).toMatchObject({ status: 400, code: "bad_request:continue-reason" });
    expect(await queues.depth(WORK)).toBe(SAMPLE);
    const CONTINUE_REASON = `ledger-db consumers restart after the redrive (${RUN})`;
    const bulk = await api.post(`/api/v1/redrives/${redriveId}/bulk`, {
      data: { continueAnywayReason: CONTINUE_REASON },
    });
    expect(bulk.status(), await bulk.text()).toBe(200);
    const done = await pollJson<{ redrive: { state: string }; counts: Record<string, number> }>(
      api,
      `/api/v1/redrives/${redriveId}`,
      (r) => ["succeeded", "failed", "cancelled"].includes(r.redrive.state),
    );
    expect(done.redrive.state).toBe("succeeded");
    expect(done.counts.moved).toBe(N);

    // The ledger, by cursor, 4 rows a page: every letter once, each moved.
    const rows: Array<{ letterId: string; state: string }> = [];
    let cursor: string | null = null;
    do {
      const page: { items: Array<{ letterId: string; state: string }>; nextCursor: string | null } = await (
        await api.get(`/api/v1/jobs/${redriveId}/ledger?limit=4${cursor ? `&cursor=${cursor}` : ""}`)
      ).json();
      rows.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(rows).toHaveLength(N);
    expect(new Set(rows.map((r) => r.letterId)).size).toBe(N);
    expect(rows.every((r) => r.state === "moved")).toBe(true);

    // The letters are where the ledger says: all back in the work queue, none left in the DLQ.
    await expect.poll(() => queues.depth(WORK)).toBe(N);
    expect(await queues.depth(DLQ)).toBe(0);

    // The audit log names the operator and the token for each step the script took.
    const audit = (await (
      await api.get(`/api/v1/audit?action=redrive.&actor=${encodeURIComponent(E2E_USERS.operator.email)}&limit=100`)
    ).json()) as {
      items: Array<{
        action: string;
        outcome: string;
        target: string | null;
        queue: string | null;
        details: Record<string, unknown> | null;
      }>;
    };
    const ours = audit.items.filter((r) => r.queue === DLQ);
    const actions = new Set(ours.map((r) => `${r.action} ${r.outcome}`));
    for (const a of [
      "redrive.plan success",
      "redrive.start success",
      "redrive.bulk_start success",
      "redrive.continue_anyway success",
    ])
      expect(actions, [...actions].join(", ")).toContain(a);
    expect(ours.some((r) => r.action === "redrive.start" && r.outcome === "failure")).toBe(true);
    expect(ours.some((r) => r.action === "redrive.bulk_start" && r.outcome === "failure")).toBe(true);
    expect(ours.find((r) => r.action === "redrive.continue_anyway")?.details).toMatchObject({
      verdict: "inconclusive",
      reason: CONTINUE_REASON,
    });
    expect(
      ours
        .filter((r) => ["redrive.start", "redrive.bulk_start"].includes(r.action))
        .every((r) => typeof r.details?.tokenId === "string"),
    ).toBe(true);
    // …and never the token itself.
    expect(JSON.stringify(audit)).not.toContain(token.slice(13));
  } finally {
    await api.dispose();
    await anonymous.dispose();
  }
});

test("a viewer's token reads the redrive but cannot plan or start one: 403 problem details", async ({ page }) => {
  await loadSession(page, "viewer");
  await page.goto("/profile");
  await page.getByTestId("token-name").fill(`viewer runbook ${RUN}`);
  await page.getByTestId("create-token-submit").click();
  const token = (await page.getByTestId("new-token-value").textContent())!.trim();
  await page.close();

  const api = await playwrightRequest.newContext({
    baseURL: BASE,
    extraHTTPHeaders: { Authorization: `Bearer ${token}` },
  });
  try {
    const q = `connectionId=${encodeURIComponent(CONNECTION)}&queue=${encodeURIComponent(DLQ)}`;
    const list = await api.get(`/api/v1/redrives?${q}`);
    expect(list.status(), await list.text()).toBe(200);
    const items = ((await list.json()) as { items: Array<{ queue: string; state: string }> }).items;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((r) => r.queue === DLQ)).toBe(true);

    const refused = await api.post("/api/v1/redrives/plan", {
      data: { connectionId: CONNECTION, queue: DLQ, selection: { kind: "filter", filter: {} } },
    });
    expect(refused.status()).toBe(403);
    expect(refused.headers()["content-type"]).toBe("application/problem+json");
    expect(await refused.json()).toMatchObject({ status: 403, code: "forbidden:redrive:sample" });
    const start = await api.post("/api/v1/redrives", { data: {} });
    expect(start.status()).toBe(403);
  } finally {
    await api.dispose();
  }
});
