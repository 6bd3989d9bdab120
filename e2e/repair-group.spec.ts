import { test, expect } from "@playwright/test";
import { deadLetterQueues, runId } from "./dead-letters";
import { dlqPath, loadSession } from "./fixtures";
import { scanToDone } from "./redrive-steps";

/**
 * Group repair, end to end on RabbitMQ: five JSON letters of one exception class
 * dead-lettered for real into a DLQ this run makes (the e2e config's `repair` switch covers
 * e2e.repair.*.dlq). Four say "status":"PAYED", one has no status. An admin scans the DLQ, opens
 * Repair… on the group, types a JSON Patch (a syntax error is shown at its line and column and
 * blocks the preview), previews it (4 apply, 1 does not, with the reason), gives a reason and the
 * fix, confirms the count and starts; on the job page the sample's verdict is inconclusive (nobody
 * consumes the work queue, and the evidence says so), the admin continues anyway with a reason and
 * the rest runs to the end. The work queue then holds the four
 * repaired copies, marked; the DLQ holds the one letter the patch did not fit, and the ledger says why.
 * An operator then sees no Repair… on the group and gets 403 on the page.
 */
const RUN = runId();
const queues = deadLetterQueues("repair", `grp${RUN}`);
const { work: WORK, dlq: DLQ } = queues;
const N = 5;
const CLASS = "com.acme.orders.UnknownStatusException";
const triagePath = `${dlqPath(DLQ)}/triage`;
const PATCH = '[{"op":"test","path":"/status","value":"PAYED"},{"op":"replace","path":"/status","value":"PAID"}]';
/** The same patch with the comma between the operations left out. */
const BROKEN = '[{"op":"test","path":"/status","value":"PAYED"} {"op":"replace","path":"/status","value":"PAID"}]';
const REASON = `Payments wrote PAYED before 2.3.3 (INC-${RUN})`;
const FIX = `orders-service 2.3.3 accepts PAID (ORD-${RUN})`;
/** Letter 3 has no status: the patch's test cannot match it. */
const body = (i: number) => (i === 3 ? { order: i, amount: "12.50" } : { order: i, status: "PAYED", amount: "12.50" });

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await queues.fill(
    Array.from({ length: N }, (_, i) => ({
      content: Buffer.from(JSON.stringify(body(i))),
      options: {
        persistent: true,
        messageId: `grp-${RUN}-${i}`,
        contentType: "application/json",
        headers: { "x-exception-class": CLASS, "x-exception-message": "Unknown payment status" },
      },
    })),
  );
});

test.afterAll(() => queues.remove());

test("an admin repairs a group with one JSON Patch: previewed letter by letter, sampled (inconclusive: nobody reads the work queue), continued anyway with a reason, the rest run; the letter it does not fit stays with the reason", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await loadSession(page, "admin");
  await page.goto(triagePath);
  await scanToDone(page);
  const group = page.getByTestId("group-row");
  await expect(group).toHaveCount(1);
  await expect(group).toHaveAttribute("data-count", String(N));
  await group.getByTestId("group-repair").click();
  await expect(page).toHaveURL(/\/repair\?group=/);

  // The scope and count before any patch.
  const scope = page.getByTestId("group-repair-scope");
  await expect(scope).toHaveAttribute("data-count", String(N));
  await expect(scope).toContainText(`${N} letters of group`);
  await expect(scope).toContainText(`in ${DLQ}`);
  await expect(page.getByTestId("group-repair-origins")).toContainText(WORK);

  // A syntax error is named where it is, and nothing can be previewed.
  const editor = page.getByTestId("group-repair-patch");
  const previewButton = page.getByTestId("group-repair-preview-button");
  await editor.fill(BROKEN);
  const error = page.getByTestId("group-repair-patch-error");
  await expect(error).toContainText("line 1, column 49");
  await expect(error).toHaveAttribute("data-line", "1");
  await expect(error).toHaveAttribute("data-column", "49");
  await expect(previewButton).toBeDisabled();

  // The patch previewed: four letters it applies to, one it does not, with the reason; the change masked as the role sees it.
  await editor.fill(PATCH);
  await expect(error).toHaveCount(0);
  await previewButton.click();
  const counts = page.getByTestId("group-repair-counts");
  await expect(counts).toHaveAttribute("data-total", String(N));
  await expect(counts).toHaveAttribute("data-applies", "4");
  await expect(counts).toHaveAttribute("data-does-not-apply", "1");
  await expect(page.getByTestId("group-repair-letter")).toHaveCount(N);
  const refused = page.locator('[data-testid="group-repair-letter"][data-applies="false"]');
  await expect(refused).toHaveCount(1);
  await expect(refused.getByTestId("group-repair-reason-cell")).toContainText("does not apply");
  const applied = page.locator('[data-testid="group-repair-letter"][data-applies="true"]');
  await expect(applied).toHaveCount(4);
  const entry = applied.first().locator('[data-testid="group-repair-diff-entry"][data-path="/status"]');
  await expect(entry).toContainText("PAYED");
  await expect(entry).toContainText("PAID");
  expect(await queues.depth(DLQ)).toBe(N); // a preview moves nothing

  // Reason, fix and stages; then the count the preview counted is confirmed.
  const submit = page.getByTestId("group-repair-submit");
  await page.getByTestId("group-repair-reason").fill(REASON);
  await page.getByTestId("group-repair-fix").fill(FIX);
  await page.getByTestId("group-repair-sample").fill("2");
  await page.getByTestId("group-repair-watch").fill("3");
  await page.getByTestId("group-repair-rate").fill("20");
  await expect(page.getByTestId("group-repair-stage-summary")).toContainText(`Stage 1 repairs and sends 2 of ${N}`);
  await expect(submit).toBeDisabled();
  await page.getByLabel(`Repair ${N} letters from`).check();
  await expect(submit).toBeEnabled();
  await expect(submit).toContainText(`Repair ${N} letters`);
  await submit.click();

  // The redrive job page: it says it repairs; the sample's two repaired copies went to a work queue
  // nobody consumes, so the verdict is inconclusive with that evidence; the admin continues anyway
  // with a reason, and the rest runs to the end.
  await expect(page).toHaveURL(/\/redrive\/[0-9a-f-]{36}$/);
  const jobId = new URL(page.url()).pathname.split("/").pop()!;
  await expect(page.getByTestId("redrive-repair")).toContainText("Repairs each letter with a JSON Patch");
  await expect(page.getByTestId("redrive-repair")).toContainText(REASON);
  await expect(page.getByTestId("redrive-fix")).toContainText(FIX);
  await expect(page.getByTestId("verdict-badge")).toHaveText("inconclusive", { timeout: 60_000 });
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-stage", "awaiting_bulk");
  await expect(page.getByTestId("n-redriven")).toHaveAttribute("data-value", "2");
  const evidence = page.getByTestId("evidence-row");
  await expect(evidence).toHaveCount(1);
  await expect(evidence).toHaveAttribute("data-target", WORK);
  await expect(evidence).toHaveAttribute("data-evidence", "no_reader");
  await expect(evidence).toContainText(`No consumer on queue "${WORK}"`);
  await expect(page.getByTestId("redrive-state")).toHaveText("Awaiting go-ahead · sample inconclusive");
  await expect(page.getByTestId("redrive-bulk")).toBeDisabled();
  const continueReason = `orders-service 2.3.3 is scaled up after the repair (ORD-${RUN})`;
  await page.getByTestId("continue-reason").fill(continueReason);
  await page.getByTestId("redrive-continue-start").click();
  await expect(page.getByTestId("redrive-anyway-reason")).toContainText(
    `Continued anyway by admin@e2e.test: “${continueReason}”`,
  );
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("redrive-settled")).toContainText(`${N} of ${N} letters handled (100%)`);
  // Not a plain "Done": one letter of the selection is still in the DLQ, and the header says so.
  await expect(page.getByTestId("redrive-state")).toHaveText("Done, 1 left");
  await expect(page.getByTestId("redrive-result")).toHaveText("Not all done: 4 moved, 1 failed and still in the DLQ.");
  await expect(page.getByTestId("n-redriven")).toHaveAttribute("data-value", "4");
  await expect(page.getByTestId("n-failed")).toHaveAttribute("data-value", "1");
  const failed = page.locator('[data-testid="ledger-row"][data-state="failed"]');
  await expect(failed).toHaveCount(1);
  await expect(failed).toContainText("Not repaired");
  await expect(page.locator('[data-testid="ledger-row"][data-state="moved"]')).toHaveCount(4);

  // The work queue holds the four repaired copies, marked with this job; the DLQ the one left, untouched.
  await expect.poll(() => queues.depth(WORK)).toBe(4);
  expect(await queues.depth(DLQ)).toBe(1);
  const ch = await queues.channel();
  try {
    const orders: number[] = [];
    for (let i = 0; i < 4; i++) {
      const m = await ch.get(WORK, { noAck: false });
      expect(m).toBeTruthy();
      if (!m) continue;
      const parsed = JSON.parse(m.content.toString("utf8")) as { order: number; status: string };
      expect(parsed).toEqual({ ...body(parsed.order), status: "PAID" });
      orders.push(parsed.order);
      expect(String(m.properties.headers?.["x-dlq-repaired-by-operation"] ?? "")).toBe(jobId);
      expect(String(m.properties.headers?.["x-dlq-original-message-id"] ?? "")).toBe(`grp-${RUN}-${parsed.order}`);
    }
    expect(orders.sort()).toEqual([0, 1, 2, 4]);
    const left = await ch.get(DLQ, { noAck: false });
    expect(left ? left.properties.messageId : left).toBe(`grp-${RUN}-3`);
    if (left) expect(JSON.parse(left.content.toString("utf8"))).toEqual(body(3));
  } finally {
    // Closing the channel returns every message it took, unacknowledged, to its queue.
    await ch.close();
  }

  // The go-ahead without a reader is on the record, with the admin's name.
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=redrive.continue_anyway`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
  await expect(page.getByTestId("audit-row")).toContainText("admin@e2e.test");
});

// After the admin's repair the group still holds the letter the patch did not fit, so its row is there to look at.
test("an operator sees no Repair… on the group and gets 403 on the group repair page", async ({ page }) => {
  await loadSession(page, "operator");
  await page.goto(triagePath);
  const group = page.getByTestId("group-row");
  await expect(group).toHaveCount(1);
  await expect(group.getByTestId("group-redrive")).toBeVisible();
  await expect(group.getByTestId("group-repair")).toHaveCount(0);
  const key = await group.getAttribute("data-group-key");
  expect(key).toBeTruthy();
  const res = await page.goto(`${dlqPath(DLQ)}/repair?group=${encodeURIComponent(key ?? "")}`);
  expect(res?.status()).toBe(403);
  await expect(page.getByTestId("repair-group-forbidden")).toBeVisible();
  await expect(page.getByTestId("group-repair-form")).toHaveCount(0);
  await expect.poll(() => queues.depth(DLQ)).toBe(1);
});
