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
  await expect(page.getByTestId("letter-count")).toHaveText(/^\d+$/);
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
