import { test, expect } from "@playwright/test";
import { Kafka, logLevel } from "kafkajs";
import { mendKafkajs } from "@/lib/brokers/kafka/mend";
import { createTopic } from "./kafka-topics";
import { startCrashLoopConsumer, type CrashLoopConsumer } from "../lib/brokers/kafka/crash-loop-consumer";
import { dlqPath, loadSession } from "./fixtures";
import { runId } from "./dead-letters";

/**
 * A consumer group stuck behind one poison record, end to end on the real Kafka: a real
 * kafkajs consumer crash-loops on one record of partition 1 while partition 0 drains. The console's
 * sampler (every 5 s in the e2e config, stuck after 8 s) flags that partition and not the other; an
 * admin opens the record it is stuck on, is told the group has a member, chooses to wait, and the
 * skip proceeds once the consumer is scaled to zero: the record is in the DLT with its origin, the
 * group's committed offset is one past it, and the restarted consumer drains the partition.
 */
const RUN = runId();
const TOPIC = `demo.e2e-stuck-${RUN}`;
const DLT = `${TOPIC}.DLT`;
const GROUP = `e2e-payments-${RUN}`;
const POISON = `{"paymentId":1,"amount":"12,50 EUR","run":"${RUN}","note":"receipt to ada.${RUN}@example.com"}`;
const kafka = mendKafkajs(
  new Kafka({ clientId: "e2e-consumer-groups", brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING }),
);
let consumer: CrashLoopConsumer | null = null;

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  await createTopic(kafka, TOPIC, 2);
  const producer = kafka.producer();
  await producer.connect();
  const ok = (n: number) => JSON.stringify({ paymentId: 100 + n, amount: "4.20", run: RUN });
  await producer.send({
    topic: TOPIC,
    acks: -1,
    messages: [0, 1, 2].map((n) => ({ partition: 0, key: `k${n}`, value: ok(n) })),
  });
  await producer.send({
    topic: TOPIC,
    acks: -1,
    messages: [
      { partition: 1, value: ok(10) },
      {
        partition: 1,
        key: "acct-7",
        value: POISON,
        headers: { "x-origin": "legacy-gateway", "x-customer-email": `ada.${RUN}@example.com` },
      },
      { partition: 1, value: ok(12) },
      { partition: 1, value: ok(13) },
    ],
  });
  await producer.disconnect();
  consumer = await startCrashLoopConsumer(kafka, {
    groupId: GROUP,
    topic: TOPIC,
    isPoison: (m) => m.value?.toString("utf8") === POISON,
  });
  await consumer.until((c) => c.filter((r) => r.partition === 0).length === 3 && c.some((r) => r.partition === 1));
});

test.afterAll(async () => {
  await consumer?.stop().catch(() => undefined);
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteGroups([GROUP]).catch(() => undefined);
  await admin.deleteTopics({ topics: [TOPIC, DLT] }).catch(() => undefined);
  await admin.disconnect();
});

test("the stuck partition is flagged, and an admin moves its record to the DLT once the group is scaled to zero", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await loadSession(page, "admin");
  await page.goto("/groups");
  const row = page.locator(`[data-testid="group-row"][data-group="${GROUP}"]`);
  // The sampler needs a few rounds to see the committed offset stand still for 8 s.
  await expect(async () => {
    await page.reload();
    await expect(row).toHaveAttribute("data-stuck", "1", { timeout: 1000 });
  }).toPass({ timeout: 60_000, intervals: [2000] });

  await row.getByTestId("group-link").click();
  await expect(page.getByTestId("member-row")).toHaveCount(1);
  const p1 = page.locator('[data-testid="partition-row"][data-partition="1"]');
  await expect(p1).toHaveAttribute("data-stuck", "true");
  await expect(page.locator('[data-testid="partition-row"][data-partition="0"]')).toHaveAttribute(
    "data-stuck",
    "false",
  );

  // The record it is stuck on, read live.
  await p1.getByTestId("partition-link").click();
  await expect(page.getByTestId("stuck-note")).toBeVisible();
  await expect(page.getByTestId("partition-record")).toHaveAttribute("data-offset", "1");
  await expect(page.getByTestId("payload-view")).toContainText("12,50 EUR");
  // Masked as on a letter's page: what, where and by which rule (an admin may reveal: no "ask an admin").
  await expect(page.getByTestId("payload-masked")).toHaveText("1 value masked in the payload by rule emails");
  await expect(page.getByTestId("meta-masked")).toHaveText(
    "1 value masked in headers, properties or the exception by rule emails",
  );

  // The group still has its (crash-looping) member: Kafka would refuse; the admin chooses to wait.
  await page.getByTestId("skip-preview").click();
  await expect(page.getByTestId("skip-count")).toContainText("1 record");
  await expect(page.getByTestId("skip-dlt")).toHaveText(DLT);
  await expect(page.getByTestId("skip-members")).toBeVisible();
  await page.getByTestId("skip-reason").fill(`Unparseable amount from the legacy gateway (INC-${RUN})`);
  await expect(page.getByTestId("skip-start")).toBeDisabled();
  await page.getByTestId("skip-wait").check();
  await page.getByTestId("skip-start").click();
  const job = page.getByTestId("skip-job").first();
  await expect(job).toHaveAttribute("data-phase", "waiting", { timeout: 20_000 });
  await expect(page.getByTestId("skip-waiting")).toBeVisible();

  // Scaled to zero: the skip proceeds.
  await consumer!.stop();
  consumer = null;
  await expect(job).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("skip-done")).toContainText("from 1 to 2");
  await expect(job.getByTestId("skip-by")).toHaveText("admin@e2e.test");

  // The page tells the truth after the skip: the group's offset and lag as the broker now holds them
  // (2 of the partition's 4 records are left for it), and no longer "stuck".
  await expect(page.getByTestId("partition-committed")).toHaveText("2");
  await expect(page.getByTestId("partition-lag")).toHaveText("2");
  await expect(page.getByTestId("partition-live")).toBeVisible();
  await expect(page.getByTestId("stuck-note")).toHaveCount(0);
  await expect(page.getByTestId("partition-stuck")).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId("partition-committed")).toHaveText("2");
  await expect(page.getByTestId("stuck-note")).toHaveCount(0);
  await expect(page.getByTestId("skip-by")).toHaveText("admin@e2e.test");

  // The group's committed offset is one past the poison record; the other partition untouched.
  const admin = kafka.admin();
  await admin.connect();
  const [offsets] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
  await admin.disconnect();
  expect(Object.fromEntries(offsets.partitions.map((p) => [p.partition, p.offset]))).toEqual({ 0: "3", 1: "2" });

  // The copy in the DLT, a letter like any other, with its origin and the stated reason.
  await page.getByTestId("skip-copy-link").first().click();
  await expect(page).toHaveURL(new RegExp(`${dlqPath(DLT, "local-kafka").replace(/[.?]/g, "\\$&")}/letters/`));
  await expect(page.getByTestId("payload-view")).toContainText("12,50 EUR");
  // Masked as on a letter's page: what, where and by which rule (an admin may reveal: no "ask an admin").
  await expect(page.getByTestId("payload-masked")).toHaveText("1 value masked in the payload by rule emails");
  await expect(page.getByTestId("meta-masked")).toHaveText(
    "1 value masked in headers, properties or the exception by rule emails",
  );
  await expect(page.getByTestId("letter-origin")).toContainText(TOPIC);
  await expect(page.getByTestId("letter-summary")).toContainText(`INC-${RUN}`);

  // The restarted service drains the partition without meeting the poison record again.
  const again = await startCrashLoopConsumer(kafka, {
    groupId: GROUP,
    topic: TOPIC,
    isPoison: (m) => m.value?.toString("utf8") === POISON,
  });
  try {
    await again.until(
      (c) =>
        c
          .filter((r) => r.partition === 1)
          .map((r) => r.offset)
          .join(",") === "2,3",
    );
    expect(again.failures).toBe(0);
  } finally {
    await again.stop();
  }
});

test("a partition, group or connection that does not exist answers 404", async ({ page }) => {
  await loadSession(page, "viewer");
  for (const path of [
    `/groups/local-kafka/${encodeURIComponent(`no-such-group-${RUN}`)}`,
    `/groups/local-kafka/${encodeURIComponent(GROUP)}/${encodeURIComponent(TOPIC)}/9`,
    `/groups/local-kafka/${encodeURIComponent(GROUP)}/${encodeURIComponent(TOPIC)}/not-a-number`,
    `/groups/no-such-connection-${RUN}/${encodeURIComponent(GROUP)}`,
  ]) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(page.getByTestId("not-found")).toBeVisible();
  }
});

test("a viewer sees the stuck partition and its record, and no skip", async ({ page }) => {
  await loadSession(page, "viewer");
  await page.goto(`/groups/local-kafka/${encodeURIComponent(GROUP)}`);
  await expect(page.getByTestId("partitions-table")).toBeVisible();
  await page.goto(`/groups/local-kafka/${encodeURIComponent(GROUP)}/${encodeURIComponent(TOPIC)}/1`);
  await expect(page.getByTestId("partition-record").or(page.getByTestId("record-none"))).toBeVisible();
  await expect(page.getByTestId("skip-form")).toHaveCount(0);
});
