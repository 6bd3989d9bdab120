import { test, expect } from "@playwright/test";
import amqp from "amqplib";
import { runId } from "./dead-letters";
import { dlqPath, loadSession } from "./fixtures";

/**
 * A RabbitMQ DLQ another console is reading, in Chromium: RabbitMQ hands a letter to one reader
 * at a time, so the page waits its turn and is refused. It says the queue is being read, never that
 * the broker is unreachable, and every letter is there once that read ends. The other console's
 * read is its read lock (lib/brokers/rabbitmq/read-lock.ts), declared here on a connection of the
 * test's own as that console would.
 */
const URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const RUN = runId();
const DLQ = `e2e.busy.${RUN}.dlq`;
const WORK = `e2e.busy.${RUN}`;
let conn: amqp.ChannelModel;

test.beforeAll(async () => {
  conn = await amqp.connect(URL);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(DLQ, { durable: true });
  await ch.assertQueue(WORK, {
    durable: true,
    arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": DLQ },
  });
  for (let i = 0; i < 2; i++)
    ch.sendToQueue(WORK, Buffer.from(`{"n":${i}}`), { persistent: true, messageId: `busy-${i}` });
  await ch.waitForConfirms();
  for (let i = 0; i < 2; i++) {
    const m = await ch.get(WORK, { noAck: false });
    if (m) ch.nack(m, false, false);
  }
  await expect.poll(async () => (await ch.checkQueue(DLQ)).messageCount).toBe(2);
  await ch.close();
});
test.afterAll(async () => {
  const ch = await conn.createChannel();
  for (const q of [WORK, DLQ]) await ch.deleteQueue(q).catch(() => undefined);
  await conn.close().catch(() => undefined);
});

test("a DLQ another read holds: the page says it is being read and links to the index, then shows every letter once it is free", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await loadSession(page, "operator");
  const other = await amqp.connect(URL);
  try {
    const ch = await other.createChannel();
    await ch.assertQueue(`dlq-console.read-lock.${DLQ}`, {
      exclusive: true,
      durable: false,
      autoDelete: false,
      arguments: { "x-queue-type": "classic" },
    });
    await page.goto(dlqPath(DLQ, "local-rabbitmq"), { timeout: 60_000 });
    const problem = page.getByTestId("problem");
    await expect(problem).toContainText("This queue is being read right now.");
    await expect(page.getByTestId("busy-note")).toContainText("none of this console's jobs is reading it");
    await expect(page.getByTestId("busy-note")).toContainText("nothing was read or changed");
    await expect(problem).not.toContainText("unreachable");
    // Meanwhile the index answers: the triage view opens without a turn at the queue.
    await problem.getByRole("link", { name: "the triage view" }).click();
    await expect(page).toHaveURL(/\/triage$/);
    await expect(page.getByTestId("scan-start")).toBeVisible();
  } finally {
    await other.close();
  }
  await page.goto(dlqPath(DLQ, "local-rabbitmq"), { timeout: 60_000 });
  await expect(page.getByTestId("letter-row")).toHaveCount(2);
});
