import { test, expect } from "@playwright/test";
import { deadLetterQueues, runId } from "./dead-letters";
import { dlqPath, loadSession } from "./fixtures";

/**
 * Repair and resubmit, end to end on RabbitMQ: one JSON letter dead-lettered for real
 * into a DLQ this run makes (the e2e config's `repair` switch covers e2e.repair.*.dlq). An admin
 * opens it, chooses Repair and resubmit, types JSON with a syntax error (told where, nothing can be
 * sent), fixes the typo'd status, previews the diff and the target, gives a reason and sends; the
 * work queue then holds the repaired copy with the console's markers and the DLQ is empty. The
 * answer links to the resubmitted message: its page says where it went, and once the consumer
 * rejects it again it shows the letter, which links back to the archived original. Operators and
 * viewers get 403 and no link.
 */
const RUN = runId();
const queues = deadLetterQueues("repair", RUN);
const DLQ = queues.dlq;
const WORK = queues.work;
const MESSAGE_ID = `ord-${RUN}`;
const letterPath = `${dlqPath(DLQ)}/letters/m-${Buffer.from(MESSAGE_ID).toString("base64url")}`;
const REASON = `Payments service wrote PAYED before the fix (INC-${RUN})`;
const BROKEN = '{\n  "order": 1,\n  "status": "PAID"\n  "note": 1\n}';
const FIXED = '{\n  "order": 1,\n  "status": "PAID"\n}';

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await queues.fill([
    {
      content: Buffer.from(JSON.stringify({ order: 1, status: "PAYED" })),
      options: {
        persistent: true,
        messageId: MESSAGE_ID,
        contentType: "application/json",
        headers: { "x-exception-class": "com.acme.orders.UnknownStatus" },
      },
    },
  ]);
});

test.afterAll(() => queues.remove());

// Refusals first, while the letter is still in the DLQ.
for (const role of ["operator", "viewer"] as const) {
  test(`a${role === "operator" ? "n" : ""} ${role} sees no repair link and gets 403 on the repair page`, async ({
    page,
  }) => {
    await loadSession(page, role);
    const res = await page.goto(`${letterPath}/repair`);
    expect(res?.status()).toBe(403);
    await expect(page.getByTestId("repair-forbidden")).toBeVisible();
    await expect(page.getByTestId("repair-payload-editor")).toHaveCount(0);
    // The letter is still in the DLQ the switch covers (these run before the admin's repair): no link for this role.
    await page.goto(letterPath);
    await expect(page.getByTestId("letter-id")).toBeVisible();
    await expect(page.getByTestId("letter-repair")).toHaveCount(0);
  });
}

test("an admin repairs a typo'd status: a JSON error is shown where it is and blocks sending; the fix is previewed, sent, confirmed and the original archived", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await loadSession(page, "admin");
  await page.goto(dlqPath(DLQ));
  await expect(page.getByTestId("letter-row")).toHaveCount(1);
  await page.getByTestId("letter-row").first().getByRole("link").first().click();
  await expect(page.getByTestId("letter-id")).toBeVisible();
  await page.getByTestId("letter-repair").click();
  await expect(page).toHaveURL(new RegExp(`${letterPath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/repair$`));

  const editor = page.getByTestId("repair-payload-editor");
  await expect(editor).toHaveValue(/"status": "PAYED"/);
  // Locked fields are shown, not editable: RabbitMQ's x-death history among them.
  await expect(page.locator('[data-testid="repair-header-row"][data-name="x-death"]')).toHaveAttribute(
    "data-locked",
    "true",
  );
  await expect(
    page.locator('[data-testid="repair-header-row"][data-name="x-death"]').getByTestId("repair-header-value"),
  ).toHaveCount(0);

  const send = page.getByTestId("repair-send");
  await page.getByTestId("repair-reason").fill(REASON);
  await editor.fill(BROKEN);
  await page.getByTestId("repair-preview-button").click();
  const error = page.getByTestId("payload-error");
  await expect(error).toContainText("line 4, column 3");
  await expect(error).toHaveAttribute("data-line", "4");
  await expect(error).toHaveAttribute("data-column", "3");
  await expect(page.getByTestId("repair-preview")).toHaveCount(0);
  await expect(send).toBeDisabled();

  await editor.fill(FIXED);
  await expect(page.getByTestId("payload-error")).toHaveCount(0);
  await expect(send).toBeDisabled();
  await page.getByTestId("repair-preview-button").click();
  const entry = page.locator('[data-testid="diff-payload-entry"][data-path="/status"]');
  await expect(entry).toContainText("PAYED");
  await expect(entry).toContainText("PAID");
  await expect(page.getByTestId("diff-payload-entry")).toHaveCount(1);
  await expect(page.getByTestId("repair-target")).toContainText(WORK);
  await expect(send).toBeEnabled();
  expect(await queues.depth(DLQ)).toBe(1);

  await send.click();
  const result = page.getByTestId("repair-result");
  await expect(result).toHaveAttribute("data-outcome", "moved", { timeout: 30_000 });
  await expect(page.getByTestId("repair-copy-id")).not.toBeEmpty();
  await expect(result).toContainText(WORK);

  // The work queue holds the repaired copy, marked; the DLQ is empty.
  await expect.poll(() => queues.depth(WORK)).toBe(1);
  expect(await queues.depth(DLQ)).toBe(0);

  // The link to the resubmitted message: its page knows where it went, before it ever comes back.
  await page.getByTestId("repair-copy-link").click();
  await expect(page.getByTestId("trail-copy-of")).toContainText(WORK);
  const copyUrl = page.url();
  expect(copyUrl).not.toContain(letterPath);

  // The consumer fails on the copy too (a real rejection): it is dead-lettered again, marked.
  const ch = await queues.channel();
  try {
    const m = await ch.get(WORK, { noAck: false });
    expect(m).toBeTruthy();
    if (m) {
      expect(JSON.parse(m.content.toString("utf8"))).toEqual({ order: 1, status: "PAID" });
      expect(String(m.properties.headers?.["x-dlq-repaired-by-operation"] ?? "")).toMatch(/^[0-9a-f-]{36}$/);
      expect(String(m.properties.headers?.["x-dlq-original-message-id"] ?? "")).toBe(MESSAGE_ID);
      expect(m.properties.messageId).not.toBe(MESSAGE_ID);
      expect(copyUrl).toContain(`m-${Buffer.from(String(m.properties.messageId)).toString("base64url")}`);
      ch.nack(m, false, false);
    }
  } finally {
    await ch.close();
  }
  await expect.poll(() => queues.depth(DLQ)).toBe(1);

  // Now the same link shows the letter itself, which links back to its original in the archive.
  await page.reload();
  await expect(page.getByTestId("payload-view")).toContainText('"status": "PAID"');
  await expect(page.getByTestId("repaired-note")).toContainText(MESSAGE_ID);

  // The original's own page says it was repaired and links to the copy.
  await page.goto(letterPath);
  await expect(page.getByTestId("trail-repaired-as")).toContainText(WORK);
  await page.getByTestId("trail-copy-link").click();
  await expect(page).toHaveURL(copyUrl);

  // The archived original, with the repair's reason.
  await page.getByTestId("repaired-original-link").click();
  await expect(page).toHaveURL(/\/archive\?/);
  const archived = page.getByTestId("archive-row");
  await expect(archived).toHaveCount(1);
  await expect(archived).toHaveAttribute("data-letter-id", `m-${Buffer.from(MESSAGE_ID).toString("base64url")}`);
  await archived.getByTestId("archive-letter-link").click();
  await expect(page.getByTestId("archived-reason")).toContainText(REASON);
  await expect(page.getByTestId("payload-view")).toContainText('"status": "PAYED"');
  // From the archived original, forward to the copy again.
  await expect(page.getByTestId("archived-copy")).toContainText(WORK);
  await page.getByTestId("archived-copy-link").click();
  await expect(page).toHaveURL(copyUrl);
  await expect(page.getByTestId("repaired-note")).toBeVisible();

  // Audit: the operation, and the letter's row with the diff.
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=letter.repair`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=letter.repaired`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
});
