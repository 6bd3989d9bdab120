import { test, expect, type Locator } from "@playwright/test";
import { deadLetterQueues, runId } from "./dead-letters";
import { dlqPath, loadSession } from "./fixtures";

/**
 * A DLQ whose name holds a direction control (U+202E) or a zero-width character shows the marker
 * where the character stands wherever its name is listed, as a letter's page does for its text:
 * the overview's row, the DLQ's own header and breadcrumbs, the redrives list. The DOM text stays
 * the name the broker holds. Two RabbitMQ DLQs, made for the run and removed after it.
 */
const RUN = runId();
const bidi = deadLetterQueues(`bidi-\u202Egpj`, RUN);
const zeroWidth = deadLetterQueues(`zw-pay\u200Bments`, RUN);

test.beforeAll(async () => {
  for (const q of [bidi, zeroWidth])
    await q.fill([{ content: Buffer.from(`{"run":"${RUN}"}`), options: { persistent: true, messageId: `n-${RUN}` } }]);
});

test.afterAll(async () => {
  await bidi.remove();
  await zeroWidth.remove();
});

async function expectMarker(name: Locator, cp: string, text: string) {
  const marker = name.locator(`[data-testid="hidden-char"][data-cp="${cp}"]`);
  await expect(marker).toHaveCount(1);
  expect(await marker.evaluate((el) => getComputedStyle(el, "::before").content)).toBe(`"⟨${cp}⟩"`);
  await expect(name).toHaveText(text);
}

test("a DLQ named with U+202E or a zero-width space shows the marker inline in the overview and on its page", async ({
  page,
}) => {
  await loadSession(page, "viewer");
  for (const [q, cp] of [
    [bidi, "U+202E"],
    [zeroWidth, "U+200B"],
  ] as const) {
    await page.goto("/");
    const row = page.locator(`[data-testid="dlq-row"][data-connection-id="local-rabbitmq"][data-queue="${q.dlq}"]`);
    await expect(async () => {
      await page.reload();
      await expect(row).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 30_000, intervals: [1000] });
    await expectMarker(row.getByTestId("dlq-link"), cp, q.dlq);

    await page.goto(dlqPath(q.dlq));
    await expectMarker(page.getByTestId("dlq-name"), cp, q.dlq);
    await expectMarker(page.getByTestId("breadcrumbs").locator(".mono"), cp, q.dlq);
  }
});
