import { test, expect } from "@playwright/test";
import { deadLetterQueues, runId } from "./dead-letters";
import { callServerAction, dlqPath, serverActionId, loadSession } from "./fixtures";

/**
 * Discard, end to end on RabbitMQ: letters dead-lettered for real into a DLQ made for this run; an
 * admin scans it, ticks two letters, discards them with a reason, watches the job reach 100 %, finds
 * them in the archive, exports them, puts one back (undo) and finds it in the DLQ again; the audit
 * log holds the operation and one row per letter. Operators and viewers see no discard or undo
 * control and their direct action calls are refused; a viewer's raw responses never carry the
 * seeded secret of an archived payload.
 */
const RUN = runId();
const queues = deadLetterQueues("discard", RUN);
const DLQ = queues.dlq;
const N = 5;
const SECRET = `sk_live_${RUN}Zq9xT4`;
const REASON = `Orders for the retired v1 checkout (ORD-${RUN})`;
const triagePath = `${dlqPath(DLQ)}/triage`;
const NIL = "00000000-0000-0000-0000-000000000000";
const depth = queues.depth;

let jobId = "";
let archiveIds: string[] = [];

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await queues.fill(
    Array.from({ length: N }, (_, i) => ({
      content: Buffer.from(
        JSON.stringify({ orderId: `ord-${RUN}-${i}`, token: SECRET, note: `<img src=x onerror="window.__pwned=1">` }),
      ),
      options: {
        persistent: true,
        messageId: `ord-${RUN}-${i}`,
        contentType: "application/json",
        headers: {
          "x-exception-class": "com.acme.checkout.UnsupportedVersion",
          "x-exception-message": `checkout v1 is retired <script>window.__pwned=1</script>`,
        },
      },
    })),
  );
});

test.afterAll(() => queues.remove());

test("an admin discards two ticked letters with a reason, finds them in the archive, exports, puts one back, audited per letter", async ({
  page,
}) => {
  test.setTimeout(150_000);
  await loadSession(page, "admin");
  await page.goto(triagePath);
  await page.getByTestId("scan-start").click();
  await expect(page.getByTestId("scan-progress")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", String(N));
  await expect(page.getByTestId("discard-set")).toBeVisible();

  const rows = page.getByTestId("triage-letter-row");
  const picked = [
    await rows.nth(0).getAttribute("data-letter-id"),
    await rows.nth(1).getAttribute("data-letter-id"),
  ] as string[];
  await rows.nth(0).getByTestId("pick-letter").check();
  await rows.nth(1).getByTestId("pick-letter").check();
  await page.getByTestId("discard-selected").click();

  await expect(page).toHaveURL(/\/discard\/new\?id=/);
  const scope = page.getByTestId("discard-scope");
  await expect(scope).toHaveAttribute("data-count", "2");
  await expect(scope).toContainText(`2 letters chosen by hand in ${DLQ}`);
  const submit = page.getByTestId("discard-submit");
  await expect(submit).toBeDisabled();
  await page.getByTestId("discard-reason").fill(REASON);
  await expect(submit).toBeDisabled();
  await page.getByTestId("discard-confirm").check();
  await expect(submit).toHaveText("Discard 2 letters");
  await submit.click();

  await expect(page).toHaveURL(/\/discard\/[0-9a-f-]{36}$/);
  jobId = page.url().split("/").pop()!;
  await expect(page.getByTestId("discard-job")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("discard-settled")).toContainText("2 of 2 letters handled (100%)");
  await expect(page.getByTestId("dn-discarded")).toHaveAttribute("data-value", "2");
  await expect(page.getByTestId("discard-state")).toHaveText("Done");
  await expect(page.getByTestId("discard-result")).toHaveText("Every selected letter is accounted for: 2 discarded.");
  await expect(page.getByTestId("discard-job-reason")).toHaveText(REASON);
  await expect(page.getByTestId("discard-ledger-row")).toHaveCount(2);
  expect(
    (
      await page.getByTestId("discard-ledger-row").evaluateAll((r) => r.map((x) => x.getAttribute("data-letter-id")))
    ).sort(),
  ).toEqual([...picked].sort());
  expect(await depth(DLQ)).toBe(N - 2);

  // The list of discards, from the main nav: this one with its DLQ, counts, reason and who; it opens the job page.
  await page.getByTestId("nav-discards").click();
  await expect(page).toHaveURL(/\/discards$/);
  const listed = page.locator(`[data-testid="discard-row"][data-id="${jobId}"]`);
  await expect(listed).toHaveAttribute("data-state", "succeeded");
  await expect(listed).toContainText(DLQ);
  await expect(listed).toContainText("2 letters chosen by hand");
  await expect(listed).toContainText("2 / 2 discarded");
  await expect(listed).toContainText(REASON);
  await expect(listed).toContainText("admin@e2e.test");
  await listed.getByTestId("discard-link").click();
  await expect(page).toHaveURL(new RegExp(`/discard/${jobId}$`));
  await expect(page.getByTestId("discard-job")).toHaveAttribute("data-state", "succeeded");
  // And the DLQ's own list, from its tabs: this run's DLQ holds only this discard.
  await page.goto(`${dlqPath(DLQ)}/triage`);
  await page.getByTestId("tab-discards").click();
  await page.waitForURL((u) => u.pathname === `${dlqPath(DLQ)}/discard`);
  await expect(page.getByTestId("discard-row")).toHaveCount(1);
  await expect(page.getByTestId("discard-row")).toHaveAttribute("data-id", jobId);
  await page.goto(`${dlqPath(DLQ)}/discard/${jobId}`);

  // The archive: both letters, with who and why; one letter's page shows the masked payload as text.
  await page.getByTestId("discard-archive-link").click();
  await expect(page.getByTestId("archive-count")).toHaveAttribute("data-count", "2");
  const arows = page.getByTestId("archive-row");
  await expect(arows).toHaveCount(2);
  archiveIds = (await arows.evaluateAll((r) => r.map((x) => x.getAttribute("data-archive-id")))) as string[];
  await expect(arows.first()).toContainText("admin@e2e.test");
  await arows.first().getByTestId("archive-letter-link").click();
  await expect(page.getByTestId("archived-reason")).toHaveText(REASON);
  await expect(page.getByTestId("payload-view")).toContainText('"token": "[hidden]"');
  await expect(page.getByTestId("payload-view")).toContainText("<img src=x onerror=");
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  await page.goBack();

  // Export: the filtered set as JSON, with the reason; payloads masked by the rules for the admin's role.
  const exported = await page.request.get(`/api/archive/export?format=json&payload=1&queue=${encodeURIComponent(DLQ)}`);
  expect(exported.status()).toBe(200);
  const body = (await exported.json()) as Array<{
    letterId: string;
    discardReason: string;
    payloadText: string | null;
  }>;
  expect(body.map((r) => r.letterId).sort()).toEqual([...picked].sort());
  expect(body.every((r) => r.discardReason === REASON)).toBe(true);
  expect(JSON.stringify(body)).not.toContain(SECRET);
  const csv = await page.request.get(`/api/archive/export?format=csv&queue=${encodeURIComponent(DLQ)}`);
  expect((await csv.text()).trim().split("\r\n")).toHaveLength(3);

  // Undo one: it goes back into the DLQ; the row says who put it back.
  const first = page.locator(`[data-testid="archive-row"][data-archive-id="${archiveIds[0]}"]`);
  const restoredLetter = (await first.getAttribute("data-letter-id"))!;
  await first.getByTestId("archive-pick").check();
  await page.getByTestId("archive-undo-reason").fill("Discarded by mistake: this order is on v2");
  await page.getByTestId("archive-undo-submit").click();
  await expect(page.getByTestId("archive-undo-result")).toContainText("Put back 1; failed 0; skipped 0.");
  await expect(first).toHaveAttribute("data-state", "restored");
  await expect(first.getByTestId("archive-pick")).toHaveCount(0);
  await expect.poll(() => depth(DLQ)).toBe(N - 1);

  await page.goto(dlqPath(DLQ));
  await expect(page.locator(`[data-testid="letter-row"][data-letter-id="${restoredLetter}"]`)).toHaveCount(1);

  // Audit: the operation and one row per letter, for the discard and for the undo.
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=discard.start`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=letter.discard`);
  await expect(page.getByTestId("audit-row")).toHaveCount(2);
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=letter.restore`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
});

for (const role of ["operator", "viewer"] as const) {
  test(`a${role === "operator" ? "n" : ""} ${role} sees no discard or undo control, and direct calls are refused`, async ({
    page,
  }) => {
    await loadSession(page, role);
    await page.goto(triagePath);
    await expect(page.getByTestId("match-count")).toBeVisible();
    await expect(page.getByTestId("discard-set")).toHaveCount(0);
    await expect(page.getByTestId("discard-selected")).toHaveCount(0);
    if (role === "operator") {
      await page.getByTestId("triage-letter-row").first().getByTestId("pick-letter").check();
      await expect(page.getByTestId("redrive-selected")).toBeVisible();
      await expect(page.getByTestId("discard-selected")).toHaveCount(0);
    }
    await page.getByTestId("triage-letter-link").first().click();
    await expect(page.getByTestId("letter-id")).toBeVisible();
    await expect(page.getByTestId("letter-discard")).toHaveCount(0);
    await page.goto(`${dlqPath(DLQ)}/discard/new?q=x`);
    await expect(page.getByTestId("discard-forbidden")).toBeVisible();

    // The archive is readable, without undo.
    await page.goto(`/archive?queue=${encodeURIComponent(DLQ)}`);
    await expect(page.getByTestId("archive-row")).toHaveCount(2);
    await page.getByTestId("archive-pick").first().check();
    await expect(page.getByTestId("archive-undo")).toHaveCount(0);
    if (jobId) {
      // The lists of discards are read like a discard's page (discard:read): shown, read-only.
      await page.goto("/discards");
      await expect(page.locator(`[data-testid="discard-row"][data-id="${jobId}"]`)).toHaveAttribute(
        "data-state",
        "succeeded",
      );
      await page.goto(`${dlqPath(DLQ)}/discard`);
      await expect(page.getByTestId("discard-row")).toHaveCount(1);
      await expect(page.getByTestId("discard-cancel")).toHaveCount(0);
      await page.goto(`${dlqPath(DLQ)}/discard/${jobId}`);
      await expect(page.getByTestId("discard-job")).toBeVisible();
      await expect(page.getByTestId("discard-cancel")).toHaveCount(0);
    }

    const path = `${dlqPath(DLQ)}/discard/new`;
    const sel = { connectionId: "local-rabbitmq", queue: DLQ, selection: { kind: "filter", filter: {} } };
    const calls: Array<[string, unknown]> = [
      ["planDiscardAction", sel],
      ["startDiscardAction", { ...sel, reason: "sneaky discard", confirmedCount: N - 1 }],
      ["cancelDiscardAction", { jobId: jobId || NIL }],
    ];
    for (const [name, arg] of calls) {
      const r = await callServerAction(page.request, path, serverActionId(name), [arg]);
      expect(r.text, name).toContain("forbidden:discard:run");
      expect(r.text, name).not.toContain('"ok":true');
    }
    const undo = await callServerAction(page.request, "/archive", serverActionId("restoreArchivedAction"), [
      { ids: archiveIds.length ? archiveIds : [NIL], reason: "sneaky undo" },
    ]);
    expect(undo.text).toContain("forbidden:archive:restore");
    expect(undo.text).not.toContain('"ok":true');
    const cancel = await page.request.post(`/api/discard/${jobId || NIL}/cancel`, {
      headers: { Origin: `http://127.0.0.1:${process.env.E2E_PORT ?? 3100}` },
    });
    expect(cancel.status()).toBe(403);
    expect(await depth(DLQ)).toBe(N - 1);

    if (role === "viewer") {
      // Raw responses: archive list, each archived letter's page (RSC and HTML), progress API and exports.
      const urls = [
        `/archive?queue=${encodeURIComponent(DLQ)}`,
        ...archiveIds.map((id) => `/archive/${id}`),
        `/api/discard/${jobId}`,
        `/api/archive/export?format=json&queue=${encodeURIComponent(DLQ)}`,
        `/api/archive/export?format=csv&queue=${encodeURIComponent(DLQ)}`,
        `/api/archive/export?format=json&payload=1&queue=${encodeURIComponent(DLQ)}`,
      ];
      for (const u of urls) {
        const variants: Array<Record<string, string>> = [{}, { RSC: "1" }];
        for (const headers of variants) {
          const res = await page.request.get(u, { headers });
          const text = await res.text();
          expect(text, u).not.toContain(SECRET);
        }
      }
      const payloadExport = await page.request.get(
        `/api/archive/export?format=json&payload=1&queue=${encodeURIComponent(DLQ)}`,
      );
      expect(payloadExport.status()).toBe(403);
      await page.goto(`/archive/${archiveIds[0]}`);
      await expect(page.getByTestId("payload-view")).toContainText('"token": "[hidden]"');
    }
  });
}

// Every role may read discards (discard:read), so the refusal here is the sign-in one: no session, no list.
test("the archive's connection and DLQ filters list what the archive holds, with counts, and filter it", async ({
  page,
}) => {
  test.setTimeout(120_000); // three page loads after a choice each, on a shared machine
  await loadSession(page, "admin");
  await page.goto("/archive");
  const dlq = page.getByTestId("archive-filter-queue");
  const connection = page.getByTestId("archive-filter-connection");
  await expect(dlq.locator("option", { hasText: DLQ })).toHaveText(`${DLQ} (2)`);
  await expect(connection.locator("option", { hasText: "local-rabbitmq" })).toHaveCount(1);
  await dlq.selectOption(DLQ);
  await expect(page).toHaveURL(/[?&]queue=/);
  await expect(page.getByTestId("archive-count")).toHaveAttribute("data-count", "2");
  const queues = () => page.getByTestId("archive-row").evaluateAll((r) => r.map((x) => x.getAttribute("data-queue")));
  expect(await queues()).toEqual([DLQ, DLQ]);
  // A connection: its own DLQs listed, ours among them, the DLQ choice reset to any.
  await connection.selectOption("local-rabbitmq");
  await expect(page).toHaveURL(/connectionId=local-rabbitmq/);
  await expect(dlq).toHaveValue("");
  await expect(dlq.locator("option", { hasText: DLQ })).toHaveCount(1);
  const rows = await page
    .getByTestId("archive-row")
    .evaluateAll((r) => r.map((x) => x.getAttribute("data-connection")));
  expect(rows.length).toBeGreaterThanOrEqual(2);
  expect(new Set(rows)).toEqual(new Set(["local-rabbitmq"]));
});

test("without a session, the lists of discards send to sign-in and show nothing", async ({ page }) => {
  for (const path of ["/discards", `${dlqPath(DLQ)}/discard`]) {
    const raw = await page.request.get(path, { maxRedirects: 0 });
    expect(await raw.text(), path).not.toContain('data-testid="discard-row"');
    await page.goto(path);
    await page.waitForURL((u) => u.pathname === "/signin");
    expect(new URL(page.url()).searchParams.get("callbackUrl"), path).toBe(path);
    await expect(page.getByTestId("discard-row")).toHaveCount(0);
  }
});
