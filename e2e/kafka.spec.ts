import { test, expect } from "@playwright/test";
import { loadSession, dlqPath } from "./fixtures";

// Seeded by scripts/seed-demo.ts (lib/demo/kafka.ts): records produced to demo.orders, a failing
// application consumer published them to demo.orders.DLT with Spring Kafka's kafka_dlt-* headers.
const KAFKA = { connectionId: "local-kafka", dlt: "demo.orders.DLT", source: "demo.orders" } as const;

test("an operator opens a Kafka DLT and a letter, and sees its exception class and original offset", async ({
  page,
}) => {
  // Opens the 5 MB record's page: slow on a loaded two-core machine.
  test.setTimeout(120_000);
  await loadSession(page, "operator");
  await page.goto("/");
  const row = page.getByTestId("dlq-row").filter({ hasText: KAFKA.dlt });
  await expect(row).toBeVisible();
  await expect(row).toContainText("kafka");
  await row.getByRole("link", { name: KAFKA.dlt }).click();
  await expect(page).toHaveURL(new RegExp(dlqPath(KAFKA.dlt, KAFKA.connectionId).replace(/\./g, "\\.")));
  await expect(page.getByTestId("dlq-name")).toHaveText(KAFKA.dlt);

  const letters = page.getByTestId("letter-row");
  await expect(letters.first()).toBeVisible();
  // Letter ids are <partition>-<offset>; the first letter, oldest first, is partition 0 offset 0.
  await expect(letters.first()).toHaveAttribute("data-letter-id", "0-0");
  // The root cause Spring named in kafka_dlt-exception-cause-fqcn, not its wrapper.
  await expect(letters.first()).toContainText("MismatchedInputException");
  await expect(letters.first()).not.toContainText("ListenerExecutionFailedException");

  await letters.first().getByRole("link").first().click();
  await expect(page).toHaveURL(/\/letters\/0-0$/);
  const summary = page.getByTestId("letter-summary");
  await expect(page.getByTestId("letter-exception-class")).toContainText(
    "com.fasterxml.jackson.databind.exc.MismatchedInputException",
  );
  await expect(page.getByTestId("exception-wrapper")).toHaveText("(wrapped in ListenerExecutionFailedException)");
  await expect(summary).toContainText(KAFKA.source);
  // The original offset was written by Spring as a big-endian int64 and is shown as a number.
  const originalOffset = page.getByTestId("property-row").filter({ hasText: "original offset" });
  await expect(originalOffset).toBeVisible();
  await expect(originalOffset).toContainText(/original offset\D*\d+/);
  await expect(page.getByTestId("property-row").filter({ hasText: "original partition" })).toContainText("0");
  await expect(
    page.getByTestId("header-row").filter({ hasText: "kafka_dlt-exception-stacktrace" }).first(),
  ).toBeVisible();
  await expect(page.getByTestId("payload-sha256")).toHaveText(/^hmac:[0-9a-f]{64}$/);

  // Reading is non-destructive: the topic still holds every letter.
  await page.goto(dlqPath(KAFKA.dlt, KAFKA.connectionId));
  await expect(letters.first()).toHaveAttribute("data-letter-id", "0-0");
});
