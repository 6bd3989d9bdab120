import { test, expect } from "@playwright/test";
import { loadSession, dlqPath } from "./fixtures";

// Seeded by scripts/seed-demo.ts: demo.orders.DLT has three partitions with Spring Kafka headers;
// letter ids are <partition>-<offset>; 0-0 is a 5 MB record.
const KAFKA = { connectionId: "local-kafka", dlt: "demo.orders.DLT" } as const;
const base = dlqPath(KAFKA.dlt, KAFKA.connectionId);
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

test("a Kafka DLT is browsed by partition, newest first and from an offset, all in the URL", async ({ page }) => {
  await loadSession(page, "operator");
  await page.goto(base);
  await expect(page.getByTestId("non-destructive-note")).toContainText("nothing is committed");
  await expect(page.getByTestId("dlq-unhandled")).toHaveText(/^\d+$/);

  await page.getByTestId("partition-select").selectOption("1");
  await expect(page).toHaveURL(new RegExp(`${esc(base)}\\?partition=1$`));
  const rows = page.getByTestId("letter-row");
  await expect(rows.first()).toHaveAttribute("data-letter-id", "1-0");
  await expect(page.getByTestId("partition-facts")).toContainText("letters");

  await page.getByTestId("order-newest").click();
  await expect(page).toHaveURL(/partition=1&order=newest/);
  await expect(rows.first()).not.toHaveAttribute("data-letter-id", "1-0");
  const newest = await rows.first().getAttribute("data-letter-id");
  expect(newest).toMatch(/^1-\d+$/);
  await expect(rows.last()).toHaveAttribute("data-letter-id", "1-0");

  await page.getByTestId("from-offset").fill("12a");
  await page.getByTestId("from-offset-go").click();
  await expect(page.getByTestId("from-offset-error")).toContainText("digits only");
  await page.getByTestId("from-offset").fill("3");
  await page.getByTestId("from-offset-go").click();
  await expect(page).toHaveURL(/partition=1&from=3&order=newest/);
  await expect(rows.first()).toHaveAttribute("data-letter-id", "1-3");

  // The URL reproduces the view.
  await page.reload();
  await expect(rows.first()).toHaveAttribute("data-letter-id", "1-3");

  await page.getByTestId("order-oldest").click();
  await expect(page).toHaveURL(/partition=1&from=3$/);
  await expect(rows.first()).toHaveAttribute("data-letter-id", "1-3");
  await expect(rows.nth(1)).toHaveAttribute("data-letter-id", "1-4");
});

test("bad browse options in a link are explained, not a crash", async ({ page }) => {
  await loadSession(page, "operator");
  const res = await page.goto(`${base}?partition=x&from=1a`);
  expect(res?.status()).toBeLessThan(500);
  await expect(page.getByTestId("bad-params")).toContainText("Partition must be a whole number");
  await expect(page.getByTestId("bad-params")).toContainText("digits only");
});

test("a Kafka letter shows its original offset and exception class; a 5 MB record is cut with a download", async ({
  page,
}) => {
  await loadSession(page, "operator");
  await page.goto(`${base}?partition=0`);
  await page.getByTestId("letter-link").first().click();
  await expect(page).toHaveURL(/\/letters\/0-0$/);
  await expect(page.getByTestId("letter-exception-class")).toContainText("ListenerExecutionFailedException");
  await expect(page.getByTestId("letter-summary").getByRole("rowheader", { name: "Original topic" })).toBeVisible();
  await expect(page.getByTestId("letter-summary")).not.toContainText("Routing keys");
  for (const name of ["key", "partition", "offset", "timestamp", "original topic", "original partition"]) {
    await expect(page.locator(`[data-testid="property-row"][data-name="${name}"]`)).toBeVisible();
  }
  await expect(page.locator('[data-testid="property-row"][data-name="original offset"]')).toContainText(/\d+/);
  await expect(page.getByTestId("payload-size")).toHaveText("5.0 MB");
  await expect(page.getByTestId("payload-note")).toBeVisible();
  await expect(page.getByTestId("download-payload")).toBeVisible();
});
