import { test, expect } from "@playwright/test";
import { randomUUID } from "node:crypto";
import { deadLetterQueues, runId } from "./dead-letters";
import { dlqPath, loadSession } from "./fixtures";

/**
 * Pages of things that do not exist answer 404 and say what is missing, once, by name: an unknown
 * DLQ, a made-up letter id (never "redriven, discarded, expired or consumed": the console never saw
 * it), a redrive, a discard and an archived letter that were never made. A broker that is down is
 * not a 404 (e2e/broker-down.spec.ts). A letter the console did see, and that has left the DLQ, still
 * has its page with the "no longer in this DLQ" words (e2e/discard-letter.spec.ts).
 */
const RUN = runId();
const queues = deadLetterQueues("missing", RUN);

test.beforeAll(async () => {
  await queues.fill([
    { content: Buffer.from(`{"run":"${RUN}"}`), options: { persistent: true, messageId: `real-${RUN}` } },
  ]);
});

test.afterAll(() => queues.remove());

test("an unknown DLQ answers 404 with one message naming it", async ({ page }) => {
  await loadSession(page, "operator");
  const name = `e2e.no-such.${RUN}.dlq`;
  const res = await page.goto(dlqPath(name));
  expect(res?.status()).toBe(404);
  await expect(page.getByTestId("not-found-title")).toHaveText(`The DLQ "${name}" does not exist on local-rabbitmq.`);
  await expect(page.getByTestId("not-found")).toHaveCount(1);
  await expect(page.getByTestId("problem")).toHaveCount(0);
  await expect(page.getByText(/does not exist/)).toHaveCount(1);

  const conn = await page.goto(dlqPath(name, `no-such-connection-${RUN}`));
  expect(conn?.status()).toBe(404);

  // Its triage page too: the status is settled before the page streams its skeleton.
  for (const path of [`${dlqPath(name)}/triage`, `${dlqPath(name, `no-such-connection-${RUN}`)}/triage`]) {
    const triage = await page.goto(path);
    expect(triage?.status(), path).toBe(404);
    await expect(page.getByTestId("not-found")).toHaveCount(1);
    await expect(page.getByTestId("problem")).toHaveCount(0);
    await expect(page.getByText(/does not exist/)).toHaveCount(1);
  }

  // A DLQ that exists still opens its triage page.
  const real = await page.goto(`${dlqPath(queues.dlq)}/triage`);
  expect(real?.status()).toBe(200);
  await expect(page.getByTestId("groups-total")).toBeVisible();
});

test("a made-up letter id answers 404, 'no such letter', and is never called redriven or discarded", async ({
  page,
}) => {
  await loadSession(page, "operator");
  const made = `made-up-${RUN}`;
  const res = await page.goto(`${dlqPath(queues.dlq)}/letters/${made}`);
  expect(res?.status()).toBe(404);
  await expect(page.getByTestId("not-found-title")).toHaveText(`No such letter: ${made}`);
  await expect(page.locator("main")).not.toContainText(/redriven|discarded|expired|consumed/);
  await expect(page.getByTestId("letter-gone")).toHaveCount(0);

  // The real one, next to it, opens.
  await page.goto(dlqPath(queues.dlq));
  const href = await page.getByTestId("letter-link").first().getAttribute("href");
  const ok = await page.goto(href!);
  expect(ok?.status()).toBe(200);
  await expect(page.getByTestId("payload-view")).toContainText(RUN);
});

test("a redrive, a discard and an archived letter that were never made answer 404", async ({ page }) => {
  await loadSession(page, "admin");
  const id = randomUUID();
  for (const [path, title] of [
    [`${dlqPath(queues.dlq)}/redrive/${id}`, `There is no such redrive: ${id}`],
    [`${dlqPath(queues.dlq)}/discard/${id}`, `There is no such discard: ${id}`],
    [`/archive/${id}`, `There is no archived letter ${id}.`],
  ] as const) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(404);
    await expect(page.getByTestId("not-found-title")).toHaveText(title);
  }
});
