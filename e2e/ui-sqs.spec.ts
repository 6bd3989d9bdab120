import { test, expect } from "@playwright/test";
import { loadSession, dlqPath } from "./fixtures";

// Seeded by scripts/seed-demo.ts into ElasticMQ through real redrive policies (`local-sqs`).
const SQS = {
  connectionId: "local-sqs",
  dlq: "demo-orders-dlq",
  fifoDlq: "demo-ledger-dlq.fifo",
  source: "demo-orders",
} as const;

test("an SQS DLQ page says that browsing hides letters and counts receives, in SQS words", async ({ page }) => {
  await loadSession(page, "operator");
  await page.goto(dlqPath(SQS.dlq, SQS.connectionId));
  const note = page.getByTestId("non-destructive-note");
  await expect(note).toContainText("Browsing hides the letters read");
  await expect(note).toContainText("raises their receive count");
  await expect(page.getByTestId("paging-note")).toContainText("no fixed order: positions are those of this read");

  const headers = page.getByTestId("letters-table").locator("thead th");
  await expect(headers).toContainText(["Reason", "Source queue", "Receive count"]);
  // Facts SQS does not have are not shown as empty columns.
  await expect(headers.filter({ hasText: "Exchange" })).toHaveCount(0);
  await expect(headers.filter({ hasText: "MessageId" })).toHaveCount(1);

  await page.getByTestId("letter-link").first().click();
  await expect(page).toHaveURL(/\/letters\//);
  const summary = page.getByTestId("letter-summary");
  await expect(summary.getByRole("rowheader", { name: "Source queue" })).toBeVisible();
  await expect(page.getByTestId("letter-origin")).toHaveText(SQS.source);
  await expect(summary.getByRole("rowheader", { name: "Receive count" })).toBeVisible();
  await expect(page.getByTestId("letter-count")).toHaveText(/^\d+ \(this view's read raised the receive count by 1\)$/);
  await expect(summary).not.toContainText("Exchange");
  await expect(summary).not.toContainText("Delivery count");
});

test("an SQS FIFO letter shows its group, deduplication id and sequence number", async ({ page }) => {
  await loadSession(page, "operator");
  await page.goto(dlqPath(SQS.fifoDlq, SQS.connectionId));
  await page.getByTestId("letter-link").first().click();
  await expect(page).toHaveURL(/\/letters\//);
  for (const name of ["MessageGroupId", "MessageDeduplicationId", "SequenceNumber", "ApproximateReceiveCount"]) {
    await expect(page.locator(`[data-testid="property-row"][data-name="${name}"]`)).toBeVisible();
  }
  // Message attributes are headers; their SQS DataTypes are listed among the properties.
  await expect(page.getByTestId("header-row").first()).toBeVisible();
  await expect(page.locator('[data-testid="property-row"][data-name="MessageAttribute DataTypes"]')).toContainText(
    "String",
  );
});

test("the DLQ list words a warning in a few words, with the whole sentence on hover, never as a raw code", async ({
  page,
}) => {
  await loadSession(page, "viewer");
  await page.goto("/");
  const row = page
    .getByTestId("dlq-row")
    .filter({ has: page.getByRole("link", { name: "demo-journal-dlq.fifo", exact: true }) });
  const badge = row.locator('[data-testid="dlq-warning"][data-code="fifo_group_read_limit"]');
  await expect(badge).toHaveText("FIFO: 10 per group readable");
  await expect(badge).toHaveAttribute("title", /at most the first 10 letters of each group/);
  await expect(page.getByTestId("dlq-warning").filter({ hasText: /^[a-z]+(_[a-z]+)+$/ })).toHaveCount(0);
});

test("an SQS letter says when it was sent, that SQS did not record its dead-lettering, and what this view's read cost", async ({
  page,
}) => {
  await loadSession(page, "operator");
  await page.goto(dlqPath(SQS.dlq, SQS.connectionId));
  await expect(page.getByTestId("read-raised-page")).toHaveText(
    "This page's read raised each letter's receive count by 1; the counts shown include it.",
  );
  await page.getByTestId("letter-link").first().click();
  await expect(page).toHaveURL(/\/letters\//);
  await expect(page.getByTestId("read-raised")).toHaveText("(this view's read raised the receive count by 1)");
  const sent = page.locator('[data-testid="property-row"][data-name="sent"] .value-cell');
  await expect(sent).toHaveText(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{3})? UTC$/);
  await expect(page.locator('[data-testid="property-row"][data-name="dead-lettered"] .value-cell')).toHaveText(
    "not recorded by SQS: a standard queue keeps SentTimestamp from the first send",
  );
  // The count shown includes this view's read: reading the letter again raises it by exactly one.
  const count = Number(await page.getByTestId("letter-count").evaluate((td) => td.firstChild?.textContent));
  await page.reload();
  await expect(page.getByTestId("letter-count")).toContainText(`${count + 1} (this view's read`);
});

test("SQS triage shows when each letter was sent and that its dead-lettering is not recorded, not the scan time", async ({
  page,
}) => {
  await loadSession(page, "operator");
  await page.goto(`${dlqPath(SQS.dlq, SQS.connectionId)}/triage`);
  const scanStarted = Date.now();
  await page.getByTestId("scan-start").click();
  const risk = page.getByTestId("scan-risk");
  const progress = page.getByTestId("scan-progress");
  await expect(risk.or(progress)).toBeVisible();
  if (await risk.isVisible()) await page.getByTestId("scan-confirm-risk").click();
  await expect(progress).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await page.reload();
  const when = page.getByTestId("triage-letter-when");
  await expect(when.first()).toBeVisible();
  for (const cell of await when.all()) {
    await expect(cell.locator("[data-kind]")).toHaveAttribute("data-kind", "sent");
    await expect(cell).toContainText(/^sent .+ · died: not recorded$/);
    // The time on hover is the letter's SentTimestamp in the one format, not the scan's.
    await expect(cell.locator("time")).toHaveAttribute("title", /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · /);
    expect(Date.parse((await cell.locator("time").getAttribute("datetime")) ?? "")).toBeLessThan(scanStarted);
  }
  await expect(page.getByTestId("triage-letters").locator("thead")).toContainText("When");
});
