import { test, expect, type Page } from "@playwright/test";
import { Kafka, logLevel } from "kafkajs";
import { mendKafkajs } from "@/lib/brokers/kafka/mend";
import { runId } from "./dead-letters";
import { callServerAction, loadSession, serverActionId } from "./fixtures";
import { createTopic } from "./kafka-topics";

/**
 * Failures as issues, as an on-call engineer meets them: a failure nobody has seen starts filling
 * a Kafka DLT (read by offset, so the console indexes it on its own, without a scan); it shows
 * as new on the failures page and on the overview; an operator acknowledges it, resolves it with
 * a note, and when it fails again it comes back as regressed. A viewer reads and is refused.
 */
const CONNECTION = "local-kafka";
const RUN = runId();
/** The e2e config's pattern dlq.demo.* makes it a DLT of the Kafka connection. */
const DLT = `dlq.demo.fail-${RUN}`;
const CAUSE = `com.acme.fail${RUN}.InventoryReservationException`;
const kafka = mendKafkajs(
  new Kafka({ clientId: "e2e-failures", brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING }),
);

async function deadLetter(n: number, from = 0) {
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({
      topic: DLT,
      messages: Array.from({ length: n }, (_, i) => ({
        value: `{"order":${from + i}}`,
        headers: {
          "kafka_dlt-exception-fqcn": "org.springframework.kafka.listener.ListenerExecutionFailedException",
          "kafka_dlt-exception-cause-fqcn": CAUSE,
          "kafka_dlt-exception-message": `Reservation failed for order ${from + i}`,
          "kafka_dlt-original-topic": "demo.orders",
        },
      })),
    });
  } finally {
    await producer.disconnect();
  }
}

const rowOf = (page: Page) =>
  page.locator(`[data-testid="issue-row"][data-connection-id="${CONNECTION}"][data-queue="${DLT}"]`);

/** The failures page filtered to this spec's DLT, reloaded until its one group is in `state`. */
async function waitForState(page: Page, tab: string, state: string) {
  await expect
    .poll(
      async () => {
        await page.goto(`/failures?tab=${tab}&connection=${CONNECTION}&dlq=${encodeURIComponent(DLT)}`);
        return (await rowOf(page).count()) ? rowOf(page).first().getAttribute("data-state") : null;
      },
      { timeout: 120_000, intervals: [3000] },
    )
    .toBe(state);
}

test.beforeAll(async () => {
  await createTopic(kafka, DLT);
});

test.afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [DLT] }).catch(() => undefined);
  await admin.disconnect();
});

test("a new failure appears without a scan, is acknowledged, resolved with a note, and comes back as regressed", async ({
  page,
  browser,
}) => {
  test.setTimeout(360_000);
  await deadLetter(3);
  await loadSession(page, "operator");

  // Nobody scans: the indexer reads the DLT's new letters and the group is new.
  await waitForState(page, "attention", "new");
  const row = rowOf(page);
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId("issue-title")).toContainText("InventoryReservationException");
  await expect(row.getByTestId("issue-letters")).toContainText("3");

  // The overview says so on the DLT's row.
  await page.goto(`/?q=${encodeURIComponent(DLT)}`);
  const attention = page
    .locator(`[data-testid="dlq-row"][data-connection-id="${CONNECTION}"][data-queue="${DLT}"]`)
    .getByTestId("dlq-attention");
  await expect(attention).toHaveText("1 new");
  // Its top failure comes from the index the console keeps, not from a scan nobody ran.
  const top = page
    .locator(`[data-testid="dlq-row"][data-connection-id="${CONNECTION}"][data-queue="${DLT}"]`)
    .getByTestId("dlq-top-failure");
  await expect(top).toHaveAttribute("data-source", "index");
  await expect(top.getByTestId("dlq-top-failure-label")).toHaveText(CAUSE);
  await expect(top.getByTestId("dlq-top-failure-source")).toHaveText(/^indexed · /);

  // Its page: what it is, where, its letters and what can be done.
  await attention.click();
  await expect(rowOf(page)).toHaveCount(1);
  await rowOf(page).getByTestId("issue-title").click();
  await expect(page.getByTestId("issue-heading")).toContainText("InventoryReservationException");
  await expect(page.getByTestId("issue-page-state")).toHaveText("new");
  await expect(page.getByTestId("issue-counts")).toContainText("3 in the DLQ now");
  await expect(page.getByTestId("issue-samples").getByRole("link")).toHaveCount(3);
  await expect(page.getByTestId("issue-redrive")).toBeVisible();
  const issueUrl = page.url();

  // A viewer reads it and sees no control; the server refuses a forged change.
  const viewer = await browser.newContext();
  try {
    const vpage = await viewer.newPage();
    await loadSession(vpage, "viewer");
    await vpage.goto(issueUrl);
    await expect(vpage.getByTestId("issue-heading")).toContainText("InventoryReservationException");
    await expect(vpage.getByTestId("issue-state-controls")).toHaveCount(0);
    const groupKey = decodeURIComponent(new URL(issueUrl).pathname.split("/").pop()!);
    const res = await callServerAction(vpage.request, "/failures", serverActionId("changeIssueStateAction"), [
      { connectionId: CONNECTION, queue: DLT, groupKey, change: { state: "acknowledged" } },
    ]);
    expect(res.text).toContain("forbidden:");
    expect(res.text).not.toContain('"ok":true');
  } finally {
    await viewer.close();
  }
  await page.reload();
  await expect(page.getByTestId("issue-page-state")).toHaveText("new");

  // Acknowledge: known, still open.
  await page.getByTestId("issue-acknowledge").click();
  await expect(page.getByTestId("issue-page-state")).toHaveText("acknowledged");
  await expect(page.getByTestId("issue-state-line")).toContainText("operator@e2e.test");

  // A note and a link: the link is text with its host, never an anchor.
  await page.getByTestId("issue-note").fill("Reservation service times out; the fix ships Thursday.");
  await page.getByTestId("issue-add-note").click();
  await expect(page.getByTestId("issue-note-text")).toHaveText(
    "Reservation service times out; the fix ships Thursday.",
  );
  await page.getByTestId("issue-link").fill("javascript:alert(1)");
  await page.getByTestId("issue-add-link").click();
  await expect(page.getByTestId("issue-link-error")).toContainText("http or https");
  await page.getByTestId("issue-link").fill("https://tickets.example.com/OPS-4242");
  await page.getByTestId("issue-add-link").click();
  const link = page.locator('[data-testid="issue-event"][data-kind="link"]');
  await expect(link).toContainText("tickets.example.com");
  await expect(link.getByTestId("issue-link-text")).toHaveText("https://tickets.example.com/OPS-4242");
  await expect(link.locator("a")).toHaveCount(0);

  // Resolve with "in the next release".
  await page.getByTestId("issue-resolve-note").fill("in the next release");
  await page.getByTestId("issue-resolve").click();
  await expect(page.getByTestId("issue-page-state")).toHaveText("resolved");
  await expect(page.getByTestId("issue-state-line")).toContainText("in the next release");

  // It fails again: the indexer sees the new letter and the group regresses, without a scan.
  await deadLetter(1, 100);
  await waitForState(page, "attention", "regressed");
  await expect(rowOf(page).getByTestId("issue-letters")).toContainText("4");
  await page.goto(`/?q=${encodeURIComponent(DLT)}`);
  await expect(
    page
      .locator(`[data-testid="dlq-row"][data-connection-id="${CONNECTION}"][data-queue="${DLT}"]`)
      .getByTestId("dlq-attention"),
  ).toHaveText("1 regressed");
  await page.goto(issueUrl);
  await expect(page.getByTestId("issue-page-state")).toHaveText("regressed");
  const states = page.locator('[data-testid="issue-event"][data-kind="state"]');
  // Newest first: regressed by the console, resolved and acknowledged by the operator, first seen.
  await expect(states).toHaveCount(4);
  await expect(states.first()).toContainText("the console");
  await expect(states.first().getByTestId("issue-state").last()).toHaveText("regressed");
});
