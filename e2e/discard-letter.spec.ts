import { test, expect } from "@playwright/test";
import { deadLetterQueues, runId } from "./dead-letters";
import { dlqPath, loadSession } from "./fixtures";

/**
 * The discard of one letter from its own page on a DLQ that was never scanned (no triage index):
 * the form offers that letter by its id (not "Discard 0 letters"), guarded by the checksum its page
 * read; the letter leaves the DLQ, is in the archive with the reason, and its page then says it is
 * no longer in the DLQ (a letter the console knows, so not a 404).
 */
const RUN = runId();
const queues = deadLetterQueues("discard-one", RUN);
const REASON = `Test order from the load generator (LG-${RUN})`;

test.beforeAll(async () => {
  await queues.fill(
    [0, 1].map((i) => ({
      content: Buffer.from(JSON.stringify({ orderId: `ord-${RUN}-${i}` })),
      options: { persistent: true, messageId: `one-${RUN}-${i}`, contentType: "application/json" },
    })),
  );
});

test.afterAll(() => queues.remove());

test("an admin discards one letter from its page on a never-scanned DLQ: it leaves the DLQ and is in the archive", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await loadSession(page, "admin");
  await page.goto(dlqPath(queues.dlq));
  const href = (await page.getByTestId("letter-link").first().getAttribute("href"))!;
  const letterId = decodeURIComponent(href.split("/").pop()!);
  await page.goto(href);
  await page.getByTestId("letter-discard").click();

  await expect(page).toHaveURL(/\/discard\/new\?id=/);
  await expect(page.getByTestId("discard-scope")).toHaveAttribute("data-count", "1");
  await expect(page.getByTestId("discard-warning").first()).toContainText("not in the triage index");
  await page.getByTestId("discard-reason").fill(REASON);
  await page.getByTestId("discard-confirm").check();
  const submit = page.getByTestId("discard-submit");
  await expect(submit).toHaveText("Discard 1 letter");
  await submit.click();

  await expect(page).toHaveURL(/\/discard\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("discard-job")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("discard-result")).toHaveText("Every selected letter is accounted for: 1 discarded.");
  await expect(page.getByTestId("discard-ledger-row")).toHaveAttribute("data-letter-id", letterId);
  await expect.poll(() => queues.depth(queues.dlq)).toBe(1);

  await page.getByTestId("discard-archive-link").click();
  const row = page.getByTestId("archive-row");
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute("data-letter-id", letterId);
  await expect(row).toContainText(REASON);

  // Its page now: a letter the console knows, gone from the DLQ; not a 404.
  const res = await page.goto(href);
  expect(res?.status()).toBe(200);
  await expect(page.getByTestId("letter-gone")).toBeVisible();
});
