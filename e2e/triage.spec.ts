import { test, expect, type Page } from "@playwright/test";
import { callServerAction, dlqPath, serverActionId, loadSession } from "./fixtures";

/**
 * Triage: scan a DLQ into the index, see its groups, filter to one, open a letter, export the
 * filtered set; a viewer can neither start a scan from the page nor by calling the action.
 * demo.billing.dlq (scripts/seed-demo.ts) holds 5 Spring-style letters: CardDeclinedException ×2
 * (same normalised message), MessageConversionException, NullPointerException, TimeoutException.
 */
const BILLING = "demo.billing.dlq";
const triagePath = (queue: string, connectionId?: string) => `${dlqPath(queue, connectionId)}/triage`;

async function scanToDone(page: Page) {
  await page.getByTestId("scan-start").click();
  const risk = page.getByTestId("scan-risk");
  const progress = page.getByTestId("scan-progress");
  await expect(risk.or(progress)).toBeVisible();
  if (await risk.isVisible()) await page.getByTestId("scan-confirm-risk").click();
  await expect(progress).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("scan-state")).toHaveText("Done");
  await expect(page.getByTestId("scan-numbers")).toContainText("letters read");
  await expect(page.getByTestId("index-age")).toContainText("Index as of");
}

test("an operator scans a DLQ, sees its groups, filters to one, opens a letter and exports the set", async ({
  page,
}) => {
  const started = new Date(Date.now() - 1000).toISOString();
  await loadSession(page, "operator");
  await page.goto(dlqPath(BILLING));
  await page.getByTestId("tab-triage").click();
  await expect(page).toHaveURL(new RegExp(`${triagePath(BILLING).replace(/\./g, "\\.")}$`));
  await scanToDone(page);

  const rows = page.getByTestId("group-row");
  await expect(rows).toHaveCount(4);
  const declined = rows.filter({ has: page.getByText("com.acme.billing.CardDeclinedException") });
  await expect(declined).toHaveAttribute("data-count", "2");
  for (const cls of [
    "org.springframework.amqp.support.converter.MessageConversionException",
    "java.lang.NullPointerException",
    "java.util.concurrent.TimeoutException",
  ]) {
    await expect(rows.filter({ has: page.getByText(cls, { exact: true }) })).toHaveAttribute("data-count", "1");
  }
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", "5");
  // Labels from the rules: the NPE is permanent-looking and says so; the timeout is transient-looking.
  const npe = rows.filter({ has: page.getByText("java.lang.NullPointerException", { exact: true }) });
  await expect(npe.getByTestId("disposition")).toHaveAttribute("data-disposition", "permanent");
  await expect(npe.getByTestId("permanent-warning")).toBeVisible();
  await expect(
    rows
      .filter({ has: page.getByText("java.util.concurrent.TimeoutException", { exact: true }) })
      .getByTestId("disposition"),
  ).toHaveAttribute("data-disposition", "transient");

  // Filter to one group: the URL carries it, the count matches the group's.
  await declined.getByTestId("group-link").click();
  await expect(page).toHaveURL(/[?&]group=/);
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", "2");
  await expect(page.getByTestId("match-count")).toHaveText("2 letters match");
  await expect(page.getByTestId("triage-letter-row")).toHaveCount(2);
  await expect(page.getByTestId("chip-group")).toBeVisible();

  // The view reproduces from its URL.
  const shared = page.url();
  await page.goto(shared);
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", "2");

  // Export CSV of the filtered set: exactly those rows.
  const exportHref = await page.getByTestId("export-csv").getAttribute("href");
  expect(exportHref).toContain("group=");
  const res = await page.request.get(exportHref!);
  expect(res.status()).toBe(200);
  expect(res.headers()["x-total-count"]).toBe("2");
  const lines = (await res.text()).trim().split("\n");
  expect(lines).toHaveLength(3);
  expect(lines.slice(1).every((l) => l.includes("CardDeclinedException"))).toBe(true);

  // j/Enter opens the selected letter on the existing letter page.
  const firstId = await page.getByTestId("triage-letter-row").first().getAttribute("data-letter-id");
  await page.getByTestId("triage-letter-link").first().click();
  await expect(page.getByTestId("letter-id")).toBeVisible();
  await expect(page).toHaveURL(
    new RegExp(`/letters/${encodeURIComponent(firstId!).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
  );

  // The scan (an operation) and the export (access) are in the audit log, under "Everything".
  await page.goto(`/audit?category=all&actor=operator%40e2e.test&from=${encodeURIComponent(started)}`);
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  const actions = await page.getByTestId("audit-row").evaluateAll((r) => r.map((x) => x.getAttribute("data-action")));
  expect(actions).toContain("triage.scan_start");
  expect(actions).toContain("triage.export");
});

test("an operator groups by a header: read from the letters at first, then from the worker's counts", async ({
  page,
}) => {
  await loadSession(page, "operator");
  await page.goto(triagePath(BILLING));
  await scanToDone(page);

  // Every demo billing letter was republished from routing key demo.billing (RepublishMessageRecoverer).
  await page.getByTestId("group-by-header").fill("x-original-routingKey");
  await page.getByRole("button", { name: "Group", exact: true }).click();
  await expect(page).toHaveURL(/[?&]by=header(%3A|:)x-original-routingKey/);
  const count = page.locator('[data-testid="value-row"][data-value="demo.billing"] td.num');
  await expect(count).toHaveText("5");
  // The first grouping by this header asks the worker to count it; meanwhile the figures come from the rows.
  await expect(page.getByTestId("header-counting")).toBeVisible();

  // The worker's round (every 5 s) counts it; from then on the same figures come from the kept counts.
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId("values-table")).toBeVisible();
    await expect(page.getByTestId("header-counting")).toHaveCount(0);
  }).toPass({ timeout: 60_000, intervals: [1_000, 2_000, 5_000] });
  await expect(count).toHaveText("5");
  await expect(page.getByTestId("value-row")).toHaveCount(1);
});

test("filters in the URL: a text search narrows the set and a bad link explains itself", async ({ page }) => {
  await loadSession(page, "viewer");
  await page.goto(triagePath(BILLING));
  await expect(page.getByTestId("group-row").first()).toBeVisible();
  // `/` focuses the search once the page is interactive.
  await expect(async () => {
    await page.keyboard.press("/");
    await expect(page.getByTestId("filter-q")).toBeFocused({ timeout: 500 });
  }).toPass();
  await page.getByTestId("filter-q").fill("Tax service");
  await page.getByTestId("filter-apply").click();
  await expect(page).toHaveURL(/q=Tax\+service/);
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", "1");
  await page.getByTestId("chip-q").click();
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", "5");

  await page.goto(`${triagePath(BILLING)}?by=reason`);
  await expect(page.getByTestId("values-table")).toBeVisible();
  await page.goto(`${triagePath(BILLING)}?from=yesterday`);
  await expect(page.getByTestId("bad-params")).toContainText("date and time");
});

test("a payload digest copied from a letter's page finds that letter in triage", async ({ page }) => {
  await loadSession(page, "viewer");
  await page.goto(dlqPath(BILLING));
  await page.getByTestId("letter-row").first().getByRole("link").first().click();
  // Masking rules apply to viewers: the digest shown is the keyed one, never the SHA-256.
  const digest = (await page.getByTestId("payload-sha256").textContent())?.trim() ?? "";
  expect(digest).toMatch(/^hmac:[0-9a-f]{64}$/);
  const letterId = (await page.getByTestId("letter-id").textContent())?.trim() ?? "";
  expect(letterId).not.toBe("");

  await page.goto(triagePath(BILLING));
  await page.getByTestId("filter-q").fill(digest);
  await page.getByTestId("filter-apply").click();
  await expect(page).toHaveURL(/q=hmac(%3A|:)[0-9a-f]{64}/);
  // Only the letters with this very payload (the DLQ holds 5 letters, none twice the same).
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", "1");
  const ids = await page
    .getByTestId("triage-letter-row")
    .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-letter-id")));
  expect(ids).toEqual([letterId]);
  // One digit changed: no letter has that payload.
  const other = digest.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
  await page.getByTestId("filter-q").fill(other);
  await page.getByTestId("filter-apply").click();
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", "0");
});

test("a viewer cannot start a scan: the button is disabled and a direct action call is refused", async ({ page }) => {
  await loadSession(page, "viewer");
  await page.goto(triagePath(BILLING));
  await expect(page.getByTestId("scan-start")).toBeDisabled();
  await expect(page.getByTestId("scan-not-allowed")).toBeVisible();
  const res = await callServerAction(page.request, triagePath(BILLING), serverActionId("startScanAction"), [
    { connectionId: "local-rabbitmq", queue: BILLING },
  ]);
  expect(res.status).toBe(200);
  expect(res.text).toContain("forbidden:triage:scan");
  expect(res.text).not.toContain('"ok":true');
  const cancel = await callServerAction(page.request, triagePath(BILLING), serverActionId("cancelScanAction"), [
    { jobId: "00000000-0000-0000-0000-000000000000" },
  ]);
  expect(cancel.text).toContain("forbidden:triage:scan");
  const rules = await callServerAction(page.request, "/admin/triage-rules", serverActionId("saveRulesAction"), [
    { rules: [], expectedVersion: 1 },
  ]);
  expect(rules.text).toContain("forbidden:triage:rules");
  expect(rules.text).not.toContain('"ok":true');
});

for (const [connectionId, queue] of [
  ["local-sqs", "demo-orders-dlq"],
  ["local-kafka", "demo.orders.DLT"],
] as const) {
  test(`a scan of ${connectionId} ${queue} produces groups`, async ({ page }) => {
    await loadSession(page, "operator");
    await page.goto(triagePath(queue, connectionId));
    await scanToDone(page);
    await expect(page.getByTestId("group-row").first()).toBeVisible();
    const total = await page.getByTestId("match-count").getAttribute("data-count");
    expect(Number(total)).toBeGreaterThan(0);
    const counts = await page
      .getByTestId("group-row")
      .evaluateAll((r) => r.map((x) => Number(x.getAttribute("data-count"))));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(Number(total));
    // A whole read: no partial-scan warning.
    await expect(page.getByTestId("scan-partial")).toHaveCount(0);
  });
}

test("a scan of an SQS FIFO DLQ whose group holds more than ten letters says it read only the head of the group", async ({
  page,
}) => {
  // demo-journal-dlq.fifo (lib/demo/sqs.ts): 14 letters in one message group.
  await loadSession(page, "operator");
  await page.goto(triagePath("demo-journal-dlq.fifo", "local-sqs"));
  await scanToDone(page);
  const partial = page.getByTestId("scan-partial");
  await expect(partial).toContainText("Not every letter was read");
  await expect(partial).toContainText(/\d+ letters? wait behind the letters read/);
  await expect(partial).toContainText("FIFO group");
  await expect(partial).toContainText("none was marked gone");
  // What was read is indexed, and it is less than the 14 letters there are.
  const numbers = (await page.getByTestId("scan-numbers").textContent()) ?? "";
  const read = Number(/^([\d,]+) \/ [\d,]+ letters read/.exec(numbers)?.[1]);
  expect(read).toBeGreaterThan(0);
  expect(read).toBeLessThan(14);
  await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", String(read));
  const unread = Number(/(\d+) letters? wait behind/.exec((await partial.textContent()) ?? "")?.[1]);
  expect(read + unread).toBe(14);
  // The letters page says the same before anyone scans.
  await page.goto(dlqPath("demo-journal-dlq.fifo", "local-sqs"));
  await expect(
    page.getByRole("status").filter({ hasText: "at most the first 10 letters of each group" }),
  ).toBeVisible();
  // Its last page says how many letters no page shows, and why: with the letters shown, all 14.
  const note = page.getByTestId("unreached-note");
  await expect(note).toContainText("Not every letter of this queue is on these pages");
  await expect(note).toContainText("FIFO group");
  await expect(page.getByTestId("page-next")).toHaveCount(0);
  const shown = await page.getByTestId("letter-link").count();
  const behind = Number(/(\d+) letters? wait behind the letters read/.exec((await note.textContent()) ?? "")?.[1]);
  expect(shown).toBeGreaterThan(0);
  expect(shown + behind).toBe(14);
});

test("an admin edits the classification rules; an invalid pattern is explained per rule", async ({ page }) => {
  await loadSession(page, "admin");
  await page.goto("/");
  await page.getByTestId("nav-triage-rules").click();
  await expect(page.getByTestId("rule-row").first()).toBeVisible();
  const version = Number(await page.getByTestId("rules-version").textContent());
  await page.getByTestId("rule-add").click();
  const added = page.getByTestId("rule-row").last();
  await added.getByTestId("rule-id").fill("e2e.card-declined");
  await added.getByTestId("rule-pattern").fill("card (?=declined)");
  await expect(added.getByTestId("rule-error")).toContainText("lookahead");
  await expect(page.getByTestId("rules-save")).toBeDisabled();
  await added.getByTestId("rule-pattern").fill("card .* declined");
  await added.getByTestId("rule-disposition").selectOption("permanent");
  await added.getByTestId("rule-description").fill("Declined cards will be declined again");
  await expect(added.getByTestId("rule-error")).toHaveCount(0);
  await page.getByTestId("rules-save").click();
  await expect(page.getByTestId("rules-message")).toContainText(`version ${version + 1}`);
  // Restore: remove the added rule.
  await page.getByTestId("rule-row").last().getByTestId("rule-remove").click();
  await page.getByTestId("rules-save").click();
  await expect(page.getByTestId("rules-message")).toContainText(`version ${version + 2}`);
});
