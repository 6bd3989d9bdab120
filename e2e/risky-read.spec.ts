import { test, expect, type Page } from "@playwright/test";
import amqp from "amqplib";
import { runId } from "./dead-letters";
import { dlqPath, loadSession } from "./fixtures";

/**
 * Reading never costs a letter, in Chromium, on quorum DLQs whose letters RabbitMQ itself
 * dead-lettered: the warning and its two choices, pages served from the snapshot with its age,
 * one confirmation = one read (the letters' own delivery counts say so), the move to safety, and
 * the banner when a read the operator chose cost letters.
 */
const URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const RUN = runId();
let conn: amqp.ChannelModel;
const made: string[] = [];

test.describe.configure({ mode: "serial" });
test.beforeAll(async () => {
  conn = await amqp.connect(URL);
});
test.afterAll(async () => {
  const ch = await conn.createChannel();
  for (const q of made) await ch.deleteQueue(q).catch(() => undefined);
  await conn.close().catch(() => undefined);
});

/** A quorum DLQ with this delivery limit, filled with n letters by RabbitMQ's own dead-lettering (nack, requeue=false). */
async function quorumDlq(name: string, n: number, limit: number) {
  const dlq = `e2e.${name}.${RUN}.dlq`;
  const work = `e2e.${name}.${RUN}`;
  made.push(work, dlq, `${dlq}.safe`);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(dlq, { durable: true, arguments: { "x-queue-type": "quorum", "x-delivery-limit": limit } });
  await ch.assertQueue(work, {
    durable: true,
    arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq },
  });
  for (let i = 0; i < n; i++)
    ch.sendToQueue(work, Buffer.from(JSON.stringify({ parcel: `${name}-${i}`, contact: `buyer-${i}@example.com` })), {
      persistent: true,
      messageId: `${name}-${i}`,
      contentType: "application/json",
      headers: {
        "x-exception-stacktrace": `java.net.ConnectException: Connection refused\n\tat com.acme.Carrier.book(Carrier.java:${i + 10})`,
        "x-notify": `desk-${i}@example.com`,
      },
    });
  await ch.waitForConfirms();
  const c = await conn.createChannel();
  await c.prefetch(n);
  let seen = 0;
  await new Promise<void>((resolve) => {
    void c.consume(work, (m) => {
      if (!m) return;
      c.nack(m, false, false);
      if (++seen === n) resolve();
    });
  });
  await c.close();
  await expect.poll(() => depth(dlq)).toBe(n);
  await ch.close();
  return dlq;
}

async function depth(q: string) {
  const ch = await conn.createChannel();
  try {
    return (await ch.checkQueue(q)).messageCount;
  } finally {
    await ch.close();
  }
}

/** The x-delivery-count of every letter, taken and put back in one go at the end of a test (it costs them one more read). */
async function deliveryCounts(q: string): Promise<number[]> {
  const ch = await conn.createChannel();
  const out: number[] = [];
  for (;;) {
    const m = await ch.get(q, { noAck: false });
    if (!m) break;
    out.push(Number(m.properties.headers?.["x-delivery-count"] ?? 0));
  }
  await ch.close(); // every letter goes back
  return out;
}

async function readOnce(page: Page) {
  await page.getByTestId("read-once-start").click();
  await expect(page.getByTestId("read-cost")).toBeVisible();
  await page.getByTestId("confirm-risky-read").click();
  await expect(page.getByTestId("snapshot-age")).toContainText("Snapshot:", { timeout: 30_000 });
}

test("a quorum DLQ warns with two choices; one confirmed read fills the snapshot, and reloads, triage and a letter read nothing more", async ({
  page,
}) => {
  const dlq = await quorumDlq("snap", 5, 3);
  await loadSession(page, "operator");
  await page.goto(dlqPath(dlq));
  await expect(page.getByTestId("read-risk")).toContainText(/delivery limit of 3/);
  await expect(page.getByTestId("non-destructive-note")).not.toContainText("non-destructive");
  await expect(page.getByTestId("choice-safe-move")).toContainText("recommended");
  await expect(page.getByTestId("safe-target")).toHaveText(`${dlq}.safe`);
  await expect(page.getByTestId("snapshot-age")).toContainText("No snapshot yet");
  await expect(page.getByTestId("snapshot-badge")).toHaveText("no snapshot yet");
  await expect(page.getByTestId("read-cost")).toContainText("Nothing was read before");

  await readOnce(page);
  await expect(page.getByTestId("snapshot-letters").getByTestId("triage-letter-link")).toHaveCount(5);
  for (let i = 0; i < 5; i++) {
    await page.reload();
    await expect(page.getByTestId("snapshot-badge")).toContainText("snapshot of");
  }
  await page.getByTestId("snapshot-letters").getByTestId("triage-letter-link").first().click();
  await expect(page.getByTestId("snapshot-letter")).toContainText("The broker was not read for this page");
  await expect(page.getByTestId("snapshot-badge")).toHaveCount(0); // the letter page has its own words
  // What the snapshot's letter hides, as the letter page says it: how many values, where, by which rule.
  await expect(page.getByTestId("payload-masked")).toHaveText(
    "1 value masked in the payload by rule emails · ask an admin for a reveal",
  );
  await expect(page.getByTestId("meta-masked")).toHaveText(
    "1 value masked in headers, properties or the exception by rule emails · ask an admin for a reveal",
  );
  await expect(page.locator("main")).not.toContainText("@example.com");
  await page.goto(`${dlqPath(dlq)}/triage`);
  await expect(page.getByTestId("snapshot-badge")).toContainText("snapshot of");
  await expect(page.getByTestId("group-row")).toHaveAttribute("data-count", "5");

  // After the confirmation, five reloads, a letter and triage: RabbitMQ delivered each letter to the console once.
  expect(await deliveryCounts(dlq)).toEqual([1, 1, 1, 1, 1]);
  await page.goto(`/audit?action=dlq.read_risky_confirmed&queue=${encodeURIComponent(dlq)}`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
});

test("moved to safety: every letter leaves the quorum DLQ for a classic queue where reading costs nothing", async ({
  page,
}) => {
  const dlq = await quorumDlq("safe", 6, 3);
  await loadSession(page, "operator");
  await page.goto(dlqPath(dlq));
  await page.getByTestId("safe-move-start").click();
  await expect(page.getByTestId("choice-safe-move")).toContainText(`Move 6 letters from ${dlq} to ${dlq}.safe?`);
  await page.getByTestId("safe-move-confirm").click();
  await expect(page.getByTestId("safe-move-done")).toHaveAttribute("data-state", "succeeded", { timeout: 30_000 });
  await expect(page.getByTestId("safe-move-moved")).toHaveText("6");
  expect(await depth(dlq)).toBe(0);
  expect(await depth(`${dlq}.safe`)).toBe(6);
  await expect(page.getByTestId("risk-empty")).toBeVisible(); // nothing left to move or read
  await expect(page.getByTestId("safe-move-start")).toHaveCount(0);

  await page.getByTestId("safe-queue-link").click();
  await expect(page.getByTestId("dlq-name")).toHaveText(`${dlq}.safe`);
  await expect(page.getByTestId("read-risk")).toHaveCount(0);
  await expect(page.getByTestId("letter-row")).toHaveCount(6);
  await page.reload();
  await expect(page.getByTestId("letter-row")).toHaveCount(6);
  await page.goto(`/audit?action=letter.safe_move&queue=${encodeURIComponent(dlq)}`);
  await expect(page.getByTestId("audit-row")).toHaveCount(6);
});

test("a read the operator chose that cost letters is said beforehand and shown afterwards", async ({ page }) => {
  const dlq = await quorumDlq("loss", 4, 1);
  await loadSession(page, "operator");
  await page.goto(dlqPath(dlq));
  await readOnce(page);
  await expect(page.getByTestId("read-loss")).toHaveCount(0);
  // The first read saw every letter at delivery count 0; with a limit of 1, the next read loses them, and the page says so.
  await page.getByTestId("read-once-start").click();
  await expect(page.getByTestId("read-cost")).toContainText(
    "The last read saw 4 letters at the limit of 1: this read would lose them",
  );
  await page.getByTestId("confirm-risky-read").click();
  await expect(page.getByTestId("read-loss")).toContainText(
    "4 letters left this DLQ during the last read (delivery limit 1)",
    { timeout: 30_000 },
  );
  expect(await depth(dlq)).toBe(0);
  await page.goto(`/audit?action=dlq.read_loss&queue=${encodeURIComponent(dlq)}`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
});

test("a viewer sees the warning and the snapshot, but can neither move nor read", async ({ page }) => {
  const dlq = await quorumDlq("viewer", 2, 3);
  await loadSession(page, "viewer");
  await page.goto(dlqPath(dlq));
  await expect(page.getByTestId("read-risk")).toBeVisible();
  await expect(page.getByTestId("risk-not-allowed")).toBeVisible();
  await expect(page.getByTestId("read-once-start")).toHaveCount(0);
  await expect(page.getByTestId("safe-move-start")).toHaveCount(0);
  expect(await depth(dlq)).toBe(2);
});
