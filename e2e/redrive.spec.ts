import { test, expect } from "@playwright/test";
import { deadLetterQueues, runId } from "./dead-letters";
import { callServerAction, dlqPath, serverActionId, loadSession } from "./fixtures";
import { scanToDone, startRedrive } from "./redrive-steps";

/**
 * Redrive, end to end on RabbitMQ: letters dead-lettered for real (nack, requeue=false) into a DLQ
 * made for this run only; an operator scans it, redrives its one group (sample, a short watch, the
 * verdict, the rest at a rate), sees the bar reach 100 %, finds every letter back in the work queue
 * and the audit log holding one row for the operation and one per letter. Nobody consumes the work
 * queue: the form says so before the sample, the verdict is inconclusive with that evidence, and the
 * rest starts only by continuing anyway with a reason (audited). A viewer can follow the redrive but
 * neither start nor control one, from the page or by calling the actions directly.
 */
const RUN = runId();
const queues = deadLetterQueues("redrive", RUN);
const { work: WORK, dlq: DLQ } = queues;
const N = 12;
const CLASS = "java.net.SocketTimeoutException";
const triagePath = `${dlqPath(DLQ)}/triage`;
const NIL = "00000000-0000-0000-0000-000000000000";
const depth = queues.depth;
const cancelled = deadLetterQueues("redrive-cancel", RUN);
const C = 6;

let jobPath = "";
let jobId = "";

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await cancelled.fill(
    Array.from({ length: C }, (_, i) => ({
      content: Buffer.from(JSON.stringify({ orderId: `cx-${RUN}-${i}` })),
      options: {
        persistent: true,
        messageId: `cx-${RUN}-${i}`,
        headers: { "x-exception-message": `Read timed out after ${i} ms`, "x-exception-class": CLASS },
      },
    })),
  );
  await queues.fill(
    Array.from({ length: N }, (_, i) => {
      const msg = `Read timed out after ${3000 + i} ms calling payments-api`;
      return {
        content: Buffer.from(JSON.stringify({ orderId: `ord-${RUN}-${i}`, amount: "12.50" })),
        options: {
          persistent: true,
          messageId: `ord-${RUN}-${i}`,
          contentType: "application/json",
          headers: {
            "x-exception-message": msg,
            "x-exception-stacktrace": `${CLASS}: ${msg}\n\tat com.acme.orders.PaymentsClient.charge(PaymentsClient.java:77)\n\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1664)`,
          },
        },
      };
    }),
  );
});

test.afterAll(async () => {
  await queues.remove();
  await cancelled.remove();
});

test("an operator redrives a group: sample, inconclusive verdict with its evidence, continue anyway with a reason, the rest at a rate, 100 %, letters back in the work queue, audited", async ({
  page,
}) => {
  test.setTimeout(150_000);
  await loadSession(page, "operator");
  await page.goto(triagePath);
  await scanToDone(page);
  const group = page.getByTestId("group-row");
  await expect(group).toHaveCount(1);
  await expect(group).toHaveAttribute("data-count", String(N));
  await expect(page.getByTestId("pick-bar")).toBeVisible();

  // From the group: the form names the exact scope and count.
  await group.getByTestId("group-redrive").click();
  await expect(page).toHaveURL(/\/redrive\/new\?group=/);
  const scope = page.getByTestId("redrive-scope");
  await expect(scope).toHaveAttribute("data-count", String(N));
  await expect(scope).toContainText(`${N} letters of group ${CLASS}`);
  await expect(scope).toContainText(`in ${DLQ}`);
  await expect(page.getByTestId("target-origins")).toContainText(WORK);
  // Before the sample: who consumes the origin. Nobody does.
  await expect(page.getByTestId("target-readers-warning")).toHaveText(
    `Nobody consumes queue ${WORK}: a sample sent there cannot come back, so its verdict will be inconclusive.`,
  );
  ({ jobPath, jobId } = await startRedrive(page, {
    count: N,
    fix: "payments-api 4.2.0 raises the read timeout to 10 s (PAY-311)",
    sample: 3,
    watchSeconds: 3,
    rate: 20,
  }));

  // The job page: the sample, the watch, an inconclusive verdict with what the console saw.
  await expect(page.getByTestId("redrive-fix")).toContainText("PAY-311");
  await expect(page.getByTestId("redrive-by")).toContainText("operator@e2e.test");
  await expect(page.getByTestId("verdict-badge")).toHaveText("inconclusive", { timeout: 90_000 });
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-stage", "awaiting_bulk");
  await expect(page.getByTestId("n-redriven")).toHaveAttribute("data-value", "3");
  await expect(page.getByTestId("verdict-words")).toContainText("nothing shows a reader took them");
  const evidence = page.getByTestId("evidence-row");
  await expect(evidence).toHaveCount(1);
  await expect(evidence).toHaveAttribute("data-target", WORK);
  await expect(evidence).toHaveAttribute("data-evidence", "no_reader");
  await expect(evidence).toContainText(`No consumer on queue "${WORK}"`);
  await expect(evidence).toContainText("nobody reads it");
  // Waiting for the operator, not failed.
  await expect(page.getByTestId("redrive-state")).toHaveText("Awaiting go-ahead · sample inconclusive");
  await expect(page.getByTestId("redrive-waiting")).toContainText("waits for your go-ahead");
  await expect(page.getByTestId("redrive-timeline").locator('[data-step="verdict"]')).toHaveAttribute(
    "data-step-state",
    "current",
  );
  await expect(page.getByTestId("redrive-resume")).toBeDisabled();

  // Continue anyway: the plain start is refused, the reason is required and recorded.
  await expect(page.getByTestId("redrive-bulk")).toBeDisabled();
  await expect(page.getByTestId("redrive-override")).toHaveCount(0);
  const go = page.getByTestId("redrive-continue-start");
  await expect(go).toBeDisabled();
  await page.getByTestId("continue-reason").fill("payments-consumer is scaled to 0 until 02:00; it reads them then");
  await go.click();
  await expect(page.getByTestId("redrive-anyway-reason")).toContainText(
    "Continued anyway by operator@e2e.test: “payments-consumer is scaled to 0 until 02:00; it reads them then”",
  );

  // Stage 2 at 20/s, to 100 %.
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("redrive-bar")).toHaveAttribute("aria-valuenow", "100");
  await expect(page.getByTestId("redrive-settled")).toContainText(`${N} of ${N} letters handled (100%)`);
  await expect(page.getByTestId("n-redriven")).toHaveAttribute("data-value", String(N));
  await expect(page.getByTestId("n-failed")).toHaveAttribute("data-value", "0");
  await expect(page.getByTestId("redrive-pause")).toBeDisabled();
  await expect(page.getByTestId("ledger-row")).toHaveCount(N);
  expect(
    new Set(await page.getByTestId("ledger-row").evaluateAll((r) => r.map((x) => x.getAttribute("data-state")))),
  ).toEqual(new Set(["moved"]));

  // Every letter is back in the work queue, marked with this redrive; none is left in the DLQ.
  await expect.poll(() => depth(WORK)).toBe(N);
  expect(await depth(DLQ)).toBe(0);
  const ch = await queues.channel();
  const m = await ch.get(WORK, { noAck: false });
  expect(m && String(m.properties.headers?.["x-dlq-redrive-id"])).toBe(jobId);
  if (m) ch.nack(m, false, true);
  await ch.close();

  // The lists show it.
  await page.goto("/redrives");
  await expect(page.locator(`[data-testid="redrive-row"][data-id="${jobId}"]`)).toHaveAttribute(
    "data-state",
    "succeeded",
  );

  // Audit: one row for the operation, one per letter.
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=redrive.start`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=letter.redrive`);
  await expect(page.getByTestId("audit-row")).toHaveCount(N);
  await page.goto(`/audit?queue=${encodeURIComponent(DLQ)}&action=redrive.continue_anyway`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
  await expect(page.getByTestId("audit-row")).toContainText("operator@e2e.test");
});

test("a viewer follows a redrive read-only: no start, no controls, and direct action calls are refused", async ({
  page,
}) => {
  await loadSession(page, "viewer");
  await page.goto(triagePath);
  await expect(page.getByTestId("group-row")).toHaveCount(1);
  await expect(page.getByTestId("group-redrive")).toHaveCount(0);
  await expect(page.getByTestId("redrive-set")).toHaveCount(0);
  await expect(page.getByTestId("pick-bar")).toHaveCount(0);
  await page.goto(`${dlqPath(DLQ)}/redrive/new?group=anything`);
  await expect(page.getByTestId("redrive-forbidden")).toBeVisible();

  if (jobPath) {
    await page.goto(jobPath);
    await expect(page.getByTestId("redrive-job")).toBeVisible();
    await expect(page.getByTestId("verdict-badge")).toHaveText("inconclusive");
    await expect(page.getByTestId("evidence-row")).toHaveAttribute("data-evidence", "no_reader");
    for (const b of ["redrive-pause", "redrive-resume", "redrive-cancel"])
      await expect(page.getByTestId(b)).toBeDisabled();
    await expect(page.getByTestId("controls-why")).toContainText(
      "Your role (viewer) can watch redrives but not control them.",
    );
    await page.goto(triagePath);
    await page.getByTestId("tab-redrives").click();
    await expect(page.getByTestId("redrive-row")).toHaveCount(1);
    await expect(page.getByTestId("redrive-row")).toHaveAttribute("data-state", "succeeded");
  }

  const path = `${dlqPath(DLQ)}/redrive`;
  const start = await callServerAction(page.request, path, serverActionId("startRedriveAction"), [
    {
      connectionId: "local-rabbitmq",
      queue: DLQ,
      selection: { kind: "filter", filter: {} },
      fix: "sneaky",
      confirmedCount: N,
    },
  ]);
  expect(start.status).toBe(200);
  expect(start.text).toContain("forbidden:redrive:sample");
  expect(start.text).not.toContain('"ok":true');
  for (const name of ["pauseRedriveAction", "resumeRedriveAction", "cancelRedriveAction"]) {
    const r = await callServerAction(page.request, path, serverActionId(name), [{ jobId: jobId || NIL }]);
    expect(r.text, name).toContain("forbidden:redrive:sample");
    expect(r.text, name).not.toContain('"ok":true');
  }
  const bulk = await callServerAction(page.request, path, serverActionId("startBulkAction"), [{ jobId: jobId || NIL }]);
  expect(bulk.text).toContain("forbidden:redrive:bulk");
  const anyway = await callServerAction(page.request, path, serverActionId("startBulkAction"), [
    { jobId: jobId || NIL, continueAnywayReason: "a viewer's reason" },
  ]);
  expect(anyway.text).toContain("forbidden:redrive:bulk");
  expect(anyway.text).not.toContain('"ok":true');
  const plan = await callServerAction(page.request, path, serverActionId("planRedriveAction"), [
    { connectionId: "local-rabbitmq", queue: DLQ, selection: { kind: "filter", filter: {} } },
  ]);
  expect(plan.text).toContain("forbidden:redrive:sample");
});

test("a redrive awaiting the go-ahead is badged so, not paused; cancelled, it says the letters it did not move are still in the DLQ, with no ETA", async ({
  page,
}) => {
  test.setTimeout(240_000);
  await loadSession(page, "operator");
  await page.goto(`${dlqPath(cancelled.dlq)}/triage`);
  await scanToDone(page);
  await page.getByTestId("group-row").getByTestId("group-redrive").click();
  const { jobPath: path, jobId: id } = await startRedrive(page, {
    count: C,
    fix: "payments-api 4.2.1 (PAY-312)",
    sample: 2,
    watchSeconds: 2,
    rate: 20,
  });

  // Waiting for the operator after its sample: badged with the verdict, and so in the lists.
  await expect(page.getByTestId("redrive-state")).toHaveText("Awaiting go-ahead · sample inconclusive", {
    timeout: 60_000,
  });
  await page.goto("/redrives");
  const row = page.locator(`[data-testid="redrive-row"][data-id="${id}"]`);
  await expect(row).toHaveAttribute("data-state", "awaiting_go_ahead");
  await expect(row).toContainText("Awaiting go-ahead");
  await expect(row).toContainText("sample inconclusive");
  await expect(row).not.toContainText("Paused");

  // Cancelled: the 4 it never moved are still in the DLQ, said so in the counts, the ledger and the result.
  await page.goto(path);
  await page.getByTestId("redrive-cancel").click();
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-state", "cancelled", { timeout: 30_000 });
  const left = page.getByTestId("n-pending");
  await expect(left).toHaveAttribute("data-value", String(C - 2));
  await expect(left).toContainText("Not moved, still in the DLQ");
  await expect(page.getByTestId("redrive-progress")).not.toContainText("Waiting");
  await expect(page.getByTestId("redrive-eta")).toHaveCount(0);
  await expect(page.getByTestId("redrive-progress")).not.toContainText("ETA");
  await expect(page.getByTestId("redrive-result")).toContainText(`2 moved, ${C - 2} not moved, still in the DLQ`);
  const pending = page.locator('[data-testid="ledger-row"][data-state="pending"]');
  await expect(pending).toHaveCount(C - 2);
  for (const text of await pending.allInnerTexts()) {
    expect(text).toContain("not moved, still in the DLQ");
    expect(text).not.toContain("waiting");
  }
  // What the page claims is what the broker holds.
  expect(await cancelled.depth(cancelled.dlq)).toBe(C - 2);
});
