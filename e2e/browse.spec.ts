import { test, expect } from "@playwright/test";
import { loadSession, dlqPath, DEMO } from "./fixtures";

test("an operator browses a seeded DLQ and opens a letter with its x-death history and payload", async ({ page }) => {
  await loadSession(page, "operator");
  await page.goto("/");
  // Other connections have look-alike names (demo.orders.DLT on Kafka): pick the RabbitMQ one exactly.
  const row = page
    .getByTestId("dlq-row")
    .filter({ has: page.getByRole("link", { name: DEMO.rejectedDlq, exact: true }) });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("Local RabbitMQ");
  await row.getByRole("link", { name: DEMO.rejectedDlq, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`${dlqPath(DEMO.rejectedDlq).replace(/\./g, "\\.")}`));

  const letters = page.getByTestId("letter-row");
  await expect(letters.first()).toBeVisible();
  await expect(letters.first()).toContainText("rejected");

  // Reading is non-destructive: the same letters are there on a second read, in the same order.
  const firstIds = await letters.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-letter-id")));
  await page.reload();
  await expect(letters.first()).toBeVisible();
  expect(await letters.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-letter-id")))).toEqual(firstIds);

  await letters.first().getByRole("link").first().click();
  await expect(page).toHaveURL(/\/letters\//);
  const deaths = page.getByTestId("death-row");
  await expect(deaths.first()).toBeVisible();
  await expect(deaths.first()).toContainText("rejected");
  await expect(page.getByTestId("header-row").filter({ hasText: "x-death" }).first()).toBeVisible();
  await expect(page.getByTestId("payload-view")).toBeVisible();
  await expect(page.getByTestId("payload-sha256")).toHaveText(/^hmac:[0-9a-f]{64}$/);

  // The letter's own URL reproduces the view.
  const url = page.url();
  await page.goto(url);
  await expect(page.getByTestId("death-row").first()).toBeVisible();
});

test("a viewer sees metadata and only a masked payload", async ({ page, request }) => {
  await loadSession(page, "viewer");
  await page.goto(dlqPath(DEMO.rejectedDlq));
  await page.getByTestId("letter-row").first().getByRole("link").first().click();
  await expect(page.getByTestId("death-row").first()).toBeVisible();
  // Masking rules apply to viewers (e2e/masking.spec.ts checks the raw responses), but nothing in this
  // order is masked: the badge shows only where something was (e2e/binary-payloads.spec.ts). No download link.
  await expect(page.getByTestId("payload-view")).toContainText('"orderId"');
  await expect(page.getByTestId("payload-masked")).toHaveCount(0);
  await expect(page.getByTestId("download-payload")).toHaveCount(0);

  // The download route refuses the viewer too, whatever the UI shows.
  const download = await page.request.get(`/api${page.url().replace(/^https?:\/\/[^/]+/, "")}/payload`);
  expect(download.status()).toBe(403);
  void request;
});

test("hostile header values are shown as text and never run", async ({ page }) => {
  let dialogs = 0;
  page.on("dialog", (d) => {
    dialogs++;
    void d.dismiss();
  });
  await loadSession(page, "operator");
  // Seeded with message id "order-1007-html-headers"; a letter's id is m-<base64url(message id)>.
  const id = `m-${Buffer.from("order-1007-html-headers").toString("base64url")}`;
  await page.goto(`${dlqPath(DEMO.rejectedDlq)}/letters/${id}`);
  await expect(
    page.getByTestId("header-row").filter({ hasText: "<script>alert('xss')</script>" }).first(),
  ).toBeVisible();
  await expect(page.getByTestId("header-row").filter({ hasText: "javascript:alert(1)" }).first()).toBeVisible();
  // Rendered as text: no element was created from the header's markup.
  expect(await page.locator("main script, main img[src=x]").count()).toBe(0);
  // React's flight data carries the value inside a JSON string in an inline script: that is data,
  // and it must not be able to close its script element.
  const inline = await page.locator("script:not([src])").evaluateAll((s) => s.map((x) => x.textContent ?? ""));
  expect(inline.some((t) => t.includes("</script>"))).toBe(false);
  expect(dialogs).toBe(0);
});

test("a DLQ named in config that does not exist says so and the console stays up", async ({ page }) => {
  await loadSession(page, "operator");
  const res = await page.goto(dlqPath("e2e.gone.dlq"));
  expect(res?.status()).toBeLessThan(500);
  await expect(page.getByText(/does not exist|not found|no longer exists/i).first()).toBeVisible();
  await page.goto("/");
  await expect(page.getByTestId("dlq-row").first()).toBeVisible();
});

test("every tab of a DLQ has the same header: the connection's name, the broker and type, the depth and the tabs", async ({
  page,
}) => {
  await loadSession(page, "operator");
  const base = dlqPath(DEMO.rejectedDlq);
  const heads: string[] = [];
  for (const path of [base, `${base}/triage`, `${base}/redrive`, `${base}/discard`]) {
    await page.goto(path);
    await expect(page.getByTestId("crumb-connection")).toHaveText("Local RabbitMQ");
    await expect(page.getByTestId("breadcrumbs")).not.toContainText(DEMO.connectionId);
    await expect(page.getByTestId("dlq-name")).toHaveText(DEMO.rejectedDlq);
    await expect(page.getByTestId("dlq-kind")).toHaveText("rabbitmq · classic");
    await expect(page.getByTestId("dlq-depth")).toHaveText(/^\d[\d,]*$/);
    await expect(page.getByTestId("dlq-tabs")).toBeVisible();
    // "in flight N" shows while another reader holds letters of this DLQ (other specs read it too):
    // the broker's state of the moment, not the header's words.
    const meta = (await page.getByTestId("dlq-head").locator(".meta").textContent()) ?? "";
    heads.push(meta.replace(/ · in flight [\d,]+/, "").replace(/\d[\d,]*/g, "N"));
  }
  expect(new Set(heads).size).toBe(1); // the same words on every tab
  await page.goto(`${base}/redrive/new`);
  await expect(page.getByTestId("crumb-connection")).toHaveText("Local RabbitMQ");
});
