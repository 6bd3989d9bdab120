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
  await expect(page.getByTestId("letter-exception-class")).toContainText("MismatchedInputException");
  await expect(page.getByTestId("exception-wrapper")).toContainText("ListenerExecutionFailedException");
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

const UTC_WHEN = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · (just now|\d+ (s|min|h|d|mo|y) ago)$/;

test("a Spring DLT shows the root cause with its wrapper, names its origin topic, and its death history says topic and why", async ({
  page,
}) => {
  await loadSession(page, "viewer");
  await page.goto(base);
  // Every letter of demo.orders.DLT names demo.orders: so does the DLT's header.
  await expect(page.getByTestId("dlq-origins")).toHaveText("demo.orders");
  await expect(page.getByTestId("dlq-head")).not.toContainText("unknown");

  // The list: each letter's cause class; the wrapper on hover, never as the class.
  const exceptions = page.getByTestId("letter-exception");
  await expect(exceptions.first()).toBeVisible();
  const texts = await exceptions.allTextContents();
  expect(texts.length).toBeGreaterThan(3);
  for (const t of texts) {
    expect(t).toMatch(
      /^(com\.acme\.orders\.OutOfStockException|com\.fasterxml\.jackson\.databind\.exc\.MismatchedInputException|java\.lang\.NullPointerException): /,
    );
    expect(t).not.toContain("ListenerExecutionFailedException");
  }
  await expect(exceptions.first()).toHaveAttribute(
    "title",
    /\(wrapped in org\.springframework\.kafka\.listener\.ListenerExecutionFailedException\)$/,
  );
  // The message is the cause's own, not the wrapper's "Listener failed; …".
  expect(texts.join("\n")).not.toContain("Listener failed");
  await expect(page.getByTestId("letter-row").first().locator(".badge-info")).toHaveText("listener failed");

  // A letter: cause, wrapper, time of death in the console's one format, the death history in topic words.
  await page.goto(`${base}/letters/1-0`);
  const cause = (await page.getByTestId("letter-exception-class").locator(".mono").first().textContent()) ?? "";
  expect(cause).toMatch(
    /^(com\.acme\.orders\.OutOfStockException|com\.fasterxml\.jackson\.databind\.exc\.MismatchedInputException|java\.lang\.NullPointerException)$/,
  );
  await expect(page.getByTestId("exception-wrapper")).toHaveText("(wrapped in ListenerExecutionFailedException)");
  await expect(page.getByTestId("letter-reason")).toHaveText("listener failed");
  await expect(page.getByTestId("letter-died-at")).toHaveText(UTC_WHEN);
  const history = page.getByTestId("death-history");
  await expect(history.getByTestId("death-queue-label")).toHaveText("Topic");
  await expect(history.locator("th", { hasText: /^Queue$/ })).toHaveCount(0);
  await expect(history.getByTestId("death-row")).toHaveCount(1);
  await expect(history.getByTestId("death-row").first().locator("td").first()).toHaveText("demo.orders");
  await expect(history.getByTestId("death-reason")).toHaveText(`listener failed: ${cause}`);
  await expect(history).not.toContainText("spring");
  // Record timestamps read in the same format (milliseconds kept where the broker has them).
  await expect(page.locator('[data-testid="property-row"][data-name="timestamp"] .value-cell')).toHaveText(
    /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{3})? UTC$/,
  );
});

test("a Kafka Connect DLT says which stage failed, in words, with the origin topic", async ({ page }) => {
  await loadSession(page, "viewer");
  const connect = dlqPath("dlq.demo.jdbc-sink", KAFKA.connectionId);
  await page.goto(connect);
  await expect(page.getByTestId("dlq-origins")).toHaveText("demo.jdbc-sink");
  await expect(page.getByTestId("letter-row").first().locator(".badge-info")).toHaveText("value converter failed");
  await page.goto(`${connect}/letters/0-0`);
  await expect(page.getByTestId("letter-exception-class")).toContainText(
    "org.apache.kafka.connect.errors.DataException",
  );
  await expect(page.getByTestId("exception-wrapper")).toHaveCount(0);
  const history = page.getByTestId("death-history");
  await expect(history.getByTestId("death-queue-label")).toHaveText("Topic");
  await expect(history.getByTestId("death-reason")).toHaveText(
    "value converter failed: org.apache.kafka.connect.errors.DataException",
  );
});

test("a chart's words agree with its axis: the day chart spans a day, the hour chart an hour", async ({ page }) => {
  await loadSession(page, "viewer");
  for (const [range, seconds, words] of [
    ["day", 86_400, "per 15 minutes over the last day"],
    ["hour", 3_600, "per minute over the last hour"],
  ] as const) {
    await page.goto(`${base}/health?range=${range}`);
    const depth = page.getByTestId("chart-depth");
    await expect(depth).toHaveAttribute("data-span-seconds", String(seconds), { timeout: 30_000 });
    const caption = (await depth.locator("figcaption").textContent()) ?? "";
    expect(caption).toContain(words);
    // Where the sampler covers less of the range, the caption says since when, inside the range.
    const since = /samples since (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC/.exec(caption);
    if (since) {
      const at = Date.parse(`${since[1].replace(" ", "T")}Z`);
      expect(at).toBeGreaterThan(Date.now() - seconds * 1000);
      expect(at).toBeLessThanOrEqual(Date.now());
    }
    await expect(depth.locator("canvas").first()).toBeVisible();
  }
});
