import { test, expect } from "@playwright/test";
import { loadSession, dlqPath } from "./fixtures";

// Seeded by scripts/seed-demo.ts (lib/demo/sqs.ts) into ElasticMQ through a real redrive policy
// (maxReceiveCount 2 on demo-orders), on the e2e config's `local-sqs` connection.
const SQS = { connectionId: "local-sqs", dlq: "demo-orders-dlq", source: "demo-orders" } as const;

test("an operator opens an SQS DLQ and a letter, and sees its receive count and source queue", async ({ page }) => {
  await loadSession(page, "operator");
  await page.goto("/");
  const row = page.getByTestId("dlq-row").filter({ hasText: SQS.dlq });
  await expect(row).toBeVisible();
  await expect(row).toContainText("sqs");
  await row.getByRole("link", { name: SQS.dlq }).click();
  await expect(page).toHaveURL(new RegExp(dlqPath(SQS.dlq, SQS.connectionId)));
  await expect(page.getByTestId("dlq-name")).toHaveText(SQS.dlq);

  const letters = page.getByTestId("letter-row");
  await expect(letters).toHaveCount(5);
  await expect(letters.first()).toContainText("maxReceiveCount");

  await letters.first().getByRole("link").first().click();
  await expect(page).toHaveURL(/\/letters\//);
  const summary = page.getByTestId("letter-summary");
  await expect(summary).toContainText(SQS.source);
  await expect(summary).toContainText("maxReceiveCount");
  const receiveCount = page.getByTestId("property-row").filter({ hasText: "ApproximateReceiveCount" });
  await expect(receiveCount).toBeVisible();
  // Two receives in demo-orders (maxReceiveCount 2) plus the console's own reads: at least 3.
  await expect(receiveCount).toContainText(/ApproximateReceiveCount\D*([3-9]|[1-9]\d+)/);
  await expect(page.getByTestId("property-row").filter({ hasText: "DeadLetterQueueSourceArn" })).toContainText(
    `:${SQS.source}`,
  );
  await expect(page.getByTestId("payload-sha256")).toHaveText(/^hmac:[0-9a-f]{64}$/);

  // Browsing released the letters: the DLQ still holds all five.
  await page.goto(dlqPath(SQS.dlq, SQS.connectionId));
  await expect(page.getByTestId("letter-row")).toHaveCount(5);
});
