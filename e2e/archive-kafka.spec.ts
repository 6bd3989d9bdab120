import { test, expect } from "@playwright/test";
import { Kafka, logLevel } from "kafkajs";
import { mendKafkajs } from "@/lib/brokers/kafka/mend";
import { createTopic } from "./kafka-topics";
import { runId } from "./dead-letters";
import { dlqPath, loadSession } from "./fixtures";

/**
 * An archived Kafka letter reads like its letter page did: the death history and the origin in the
 * broker's words (topic, original topic, never "Queue"), and the masked badges of the letter page
 * (shown only where something was masked, saying how many values, where and by which rule, and
 * sending a role that may not reveal to an admin). The letter is a Spring Kafka DLT record with an
 * e-mail address in its payload and in a header, discarded from its page by an admin.
 */
const RUN = runId();
const SOURCE = `demo.e2e-archive-${RUN}`;
const DLT = `dlq.demo.e2e-archive-${RUN}`;
const EMAIL = `ada.${RUN}@example.com`;
const REASON = `Test order from the load generator (LG-${RUN})`;
const kafka = mendKafkajs(
  new Kafka({ clientId: "e2e-archive", brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING }),
);

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await createTopic(kafka, DLT);
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: DLT,
    acks: -1,
    messages: [
      {
        value: JSON.stringify({ orderId: `ord-${RUN}`, note: `refund for ${EMAIL} pending` }),
        headers: {
          "kafka_dlt-original-topic": SOURCE,
          "kafka_dlt-exception-fqcn": "com.acme.orders.OutOfStockException",
          "kafka_dlt-exception-message": "SKU AB-12 has 0 units left",
          "x-customer-email": EMAIL,
        },
      },
    ],
  });
  await producer.disconnect();
});

test.afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [DLT] }).catch(() => undefined);
  await admin.disconnect();
});

let archived = "";

test("an admin discards the Kafka letter from its page; it is in the archive", async ({ page }) => {
  test.setTimeout(120_000);
  await loadSession(page, "admin");
  await page.goto(`${dlqPath(DLT, "local-kafka")}/letters/0-0`);
  await expect(page.getByTestId("death-queue-label")).toHaveText("Topic");
  await page.getByTestId("letter-discard").click();
  await expect(page.getByTestId("discard-scope")).toHaveAttribute("data-count", "1");
  await page.getByTestId("discard-reason").fill(REASON);
  await page.getByTestId("discard-confirm").check();
  await page.getByTestId("discard-submit").click();
  await expect(page.getByTestId("discard-job")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await page.getByTestId("discard-archive-link").click();
  await expect(page.getByTestId("archive-row")).toHaveCount(1);
  archived = (await page.getByTestId("archive-letter-link").getAttribute("href"))!;
  expect(archived).toMatch(/^\/archive\//);
});

test("the archived Kafka letter says topic, not queue, and says what was masked and by which rule", async ({
  page,
}) => {
  await loadSession(page, "operator");
  await page.goto(archived);
  await expect(page.getByTestId("archived-reason")).toHaveText(REASON);
  await expect(page.getByTestId("death-queue-label")).toHaveText("Topic");
  await expect(page.getByTestId("death-row")).toContainText(SOURCE);
  await expect(page.getByRole("rowheader", { name: "Original topic" })).toBeVisible();
  await expect(page.getByTestId("archived-origin")).toHaveText(SOURCE);
  await expect(page.locator("main")).not.toContainText(/\bQueue\b/);

  await expect(page.getByTestId("payload-masked")).toHaveText(
    "1 value masked in the payload by rule emails · ask an admin for a reveal",
  );
  await expect(page.getByTestId("payload-masked")).toHaveAttribute("title", /^emails: E-mail addresses/);
  await expect(page.getByTestId("meta-masked")).toHaveText(
    "1 value masked in headers, properties or the exception by rule emails · ask an admin for a reveal",
  );
  await expect(page.getByTestId("payload-view")).not.toContainText(EMAIL);
});

test("an admin, who may reveal on the letter page, is not sent to an admin", async ({ page }) => {
  await loadSession(page, "admin");
  await page.goto(archived);
  await expect(page.getByTestId("payload-masked")).toHaveText("1 value masked in the payload by rule emails");
  await expect(page.getByTestId("meta-masked")).toHaveText(
    "1 value masked in headers, properties or the exception by rule emails",
  );
});
