import { test, expect, type APIRequestContext, type Page } from "@playwright/test";
import { createHash } from "node:crypto";
import amqp from "amqplib";
import { callServerAction, dlqPath, serverActionId, loadSession } from "./fixtures";

/**
 * Masking end to end on RabbitMQ: a letter dead-lettered for real (nack, requeue=false) whose
 * payload and headers hold a card number, an e-mail, an IBAN and a bearer token. The RAW responses
 * (letter page HTML and its RSC payload, the download route, triage exports) for a viewer and an
 * operator never contain those values, but do contain the masked forms. An admin reveals them
 * only with a reason, audited; a sensitive DLQ shows a viewer no payload at all.
 */
const URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const RUN = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const WORK = `e2e.mask.${RUN}`;
const DLQ = `${WORK}.dlq`;
const SENS_WORK = `e2e.masksens.${RUN}`;
const SENS_DLQ = `${SENS_WORK}.dlq`;
const MSG_ID = `mask-${RUN}`;
const SENS_MSG_ID = `masksens-${RUN}`;
// The RabbitMQ adapter's letter id for a message id (lib/brokers/rabbitmq/identity.ts).
const letterIdFor = (messageId: string) => `m-${Buffer.from(messageId, "utf8").toString("base64url")}`;
const ID = letterIdFor(MSG_ID);
const SENS_ID = letterIdFor(SENS_MSG_ID);

const CARD = "4111111111111111";
const EMAIL = `ada.${RUN}@example.com`;
const IBAN = "DE89370400440532013000";
const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYXNraW5nLWUyZSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg";
const PASSWORD = `hunter2-${RUN}`;
// The payloads' SHA-256 are added as the letters are dead-lettered: a digest of the bytes would let a
// role check guessed payloads against it, so no masked view may show it (lib/masking/digest.ts).
const SECRETS = [CARD, EMAIL, IBAN, JWT, PASSWORD, "4111 1111 1111 1111"];

const letterPath = (queue: string, id: string) => `${dlqPath(queue)}/letters/${encodeURIComponent(id)}`;
const downloadPath = (queue: string, id: string) =>
  `/api/dlqs/local-rabbitmq/${encodeURIComponent(queue)}/letters/${encodeURIComponent(id)}/payload`;

let conn: amqp.ChannelModel;

async function deadLetter(work: string, dlq: string, messageId: string) {
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(dlq, { durable: true });
  await ch.assertQueue(work, {
    durable: true,
    arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq },
  });
  const body = {
    orderId: messageId,
    customer: { email: EMAIL, card: CARD, iban: IBAN },
    password: PASSWORD,
    note: `refund to ${IBAN} for ${EMAIL}`,
  };
  const bytes = Buffer.from(JSON.stringify(body));
  SECRETS.push(createHash("sha256").update(bytes).digest("hex"));
  ch.sendToQueue(work, bytes, {
    persistent: true,
    messageId,
    contentType: "application/json",
    headers: {
      authorization: `Bearer ${JWT}`,
      "x-customer-email": EMAIL,
      "x-card": CARD,
      "x-iban": IBAN,
      "x-exception-message": `Card ${CARD} declined for ${EMAIL}`,
    },
  });
  await ch.waitForConfirms();
  const consumer = await conn.createChannel();
  await new Promise<void>((resolve) => {
    void consumer.consume(work, (m) => {
      if (!m) return;
      consumer.nack(m, false, false);
      resolve();
    });
  });
  await consumer.close();
  for (let i = 0; i < 200 && (await ch.checkQueue(dlq)).messageCount < 1; i++)
    await new Promise((r) => setTimeout(r, 50));
  expect((await ch.checkQueue(dlq)).messageCount).toBe(1);
  await ch.close();
}

/** The page HTML and its RSC payload (what a client-side navigation fetches), as raw text. */
async function rawLetter(request: APIRequestContext, path: string): Promise<string> {
  const html = await request.get(path);
  expect(html.status()).toBe(200);
  const rsc = await request.get(path, { headers: { RSC: "1" } });
  expect(rsc.status()).toBe(200);
  return (await html.text()) + "\n" + (await rsc.text());
}

/** Switches the page to `role`'s session (e2e/auth.setup.ts), in place of whoever it was. */
async function switchTo(page: Page, role: "viewer" | "operator" | "admin") {
  await loadSession(page, role);
}

function expectNoSecrets(raw: string, where: string) {
  for (const s of SECRETS) expect(raw.includes(s), `${where} contains ${s}`).toBe(false);
}

async function saveSensitive(page: Page, sensitive: Array<{ connectionId: string; pattern: string }>) {
  await page.goto("/admin/masking");
  const version = Number(await page.getByTestId("masking-version").textContent());
  const rules = JSON.parse(await page.getByTestId("masking-rules").inputValue());
  const res = await callServerAction(page.request, "/admin/masking", serverActionId("saveMaskingRulesAction"), [
    { rules, sensitive, expectedVersion: version },
  ]);
  expect(res.text).toContain('"ok":true');
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  conn = await amqp.connect(URL);
  await deadLetter(WORK, DLQ, MSG_ID);
  await deadLetter(SENS_WORK, SENS_DLQ, SENS_MSG_ID);
});

test.afterAll(async () => {
  if (!conn) return;
  const ch = await conn.createChannel();
  for (const q of [WORK, DLQ, SENS_WORK, SENS_DLQ]) await ch.deleteQueue(q).catch(() => undefined);
  await conn.close().catch(() => undefined);
});

for (const role of ["viewer", "operator"] as const) {
  test(`a ${role}'s raw letter page never holds the seeded secrets, only their masked forms`, async ({ page }) => {
    await switchTo(page, role);
    const raw = await rawLetter(page.request, letterPath(DLQ, ID));
    expectNoSecrets(raw, `${role} letter page`);
    expect(raw).toContain("****1111");
    expect(raw).toContain("****3000");
    expect(raw).toContain("[hidden]");
    expect(raw).toMatch(/\[hash:[0-9a-f]{12}\]/);
    await page.goto(letterPath(DLQ, ID));
    await expect(page.getByTestId("payload-view")).toContainText("****1111");
    await expect(page.getByTestId("payload-masked")).toBeVisible();
    await expect(page.getByTestId("header-row").filter({ hasText: "authorization" })).toContainText("[hidden]");
    await expect(page.getByTestId("reveal-open")).toHaveCount(0);
  });
}

test("downloads: a viewer is refused; an operator gets a masked copy, never the original bytes", async ({ page }) => {
  await switchTo(page, "viewer");
  const refused = await page.request.get(downloadPath(DLQ, ID));
  expect(refused.status()).toBe(403);
  expectNoSecrets(await refused.text(), "viewer download");

  await switchTo(page, "operator");
  const res = await page.request.get(downloadPath(DLQ, ID));
  expect(res.status()).toBe(200);
  expect(res.headers()["x-payload-masked"]).toBeTruthy();
  expect(res.headers()["content-disposition"]).toContain(".masked.json");
  const text = await res.text();
  expectNoSecrets(text, "operator download");
  expectNoSecrets(JSON.stringify(res.headers()), "operator download headers");
  expect(text).toContain("****1111");
});

async function scanToDone(page: Page, queue: string) {
  await page.goto(`${dlqPath(queue)}/triage`);
  await page.getByTestId("scan-start").click();
  const progress = page.getByTestId("scan-progress");
  await expect(progress).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
}

test("triage exports (CSV and JSON, with payloads) are masked for operators, and headers for viewers", async ({
  page,
}) => {
  await switchTo(page, "operator");
  await scanToDone(page, DLQ);
  const q = `connectionId=local-rabbitmq&queue=${encodeURIComponent(DLQ)}`;
  for (const format of ["csv", "json"]) {
    const res = await page.request.get(`/api/triage/export?${q}&format=${format}&payload=1`);
    expect(res.status()).toBe(200);
    const text = await res.text();
    expect(text).toContain(MSG_ID);
    expectNoSecrets(text, `operator ${format} export`);
    expect(text).toContain("****1111");
  }
  await switchTo(page, "viewer");
  const v = await page.request.get(`/api/triage/export?${q}&format=json`);
  expect(v.status()).toBe(200);
  const vt = await v.text();
  expect(vt).toContain(MSG_ID);
  expectNoSecrets(vt, "viewer json export");
  expect((await page.request.get(`/api/triage/export?${q}&format=json&payload=1`)).status()).toBe(403);
});

test("an admin sees masked values until a reveal with a reason, which is audited", async ({ page }) => {
  await switchTo(page, "admin");
  const path = letterPath(DLQ, ID);
  expectNoSecrets(await rawLetter(page.request, path), "admin letter page");

  // The action refuses a missing or short reason, whatever the form does.
  const short = await callServerAction(page.request, path, serverActionId("revealPayloadAction"), [
    { connectionId: "local-rabbitmq", queue: DLQ, letterId: ID, reason: "" },
  ]);
  expect(short.text).toContain("bad_request:reason");
  expectNoSecrets(short.text, "refused reveal");

  await page.goto(path);
  await page.getByTestId("reveal-open").click();
  await page.getByTestId("reveal-reason").fill("short");
  await page.getByTestId("reveal-submit").click();
  await expect(page.getByTestId("revealed")).toHaveCount(0);
  const reason = `Customer ${RUN} disputes the refund account`;
  await page.getByTestId("reveal-reason").fill(reason);
  await page.getByTestId("reveal-submit").click();
  await expect(page.getByTestId("revealed-payload")).toContainText(CARD);
  await expect(page.getByTestId("revealed-payload")).toContainText(IBAN);
  await expect(page.getByTestId("revealed-headers")).toContainText(JWT);

  // Gone on reload.
  await page.reload();
  await expect(page.getByTestId("revealed")).toHaveCount(0);
  await expect(page.getByTestId("payload-view")).not.toContainText(CARD);

  await page.goto(`/audit?action=payload.reveal`);
  await expect(page.locator("body")).toContainText(reason);

  // Operators cannot reveal by calling the action directly.
  await switchTo(page, "operator");
  const denied = await callServerAction(page.request, path, serverActionId("revealPayloadAction"), [
    { connectionId: "local-rabbitmq", queue: DLQ, letterId: ID, reason },
  ]);
  expect(denied.text).toContain("forbidden:payload:reveal");
  expectNoSecrets(denied.text, "operator reveal");
});

test("a sensitive DLQ hides payloads from viewers entirely; operators see them masked", async ({ page }) => {
  await switchTo(page, "admin");
  await saveSensitive(page, [{ connectionId: "local-rabbitmq", pattern: `e2e.masksens.${RUN}.*` }]);
  try {
    await switchTo(page, "viewer");
    const raw = await rawLetter(page.request, letterPath(SENS_DLQ, SENS_ID));
    expectNoSecrets(raw, "viewer sensitive page");
    expect(raw).not.toContain("orderId");
    await page.goto(letterPath(SENS_DLQ, SENS_ID));
    await expect(page.getByTestId("payload-hidden")).toContainText("sensitive");
    await expect(page.getByTestId("payload-view")).toHaveCount(0);

    await switchTo(page, "operator");
    const op = await rawLetter(page.request, letterPath(SENS_DLQ, SENS_ID));
    expectNoSecrets(op, "operator sensitive page");
    expect(op).toContain("orderId");
    expect(op).toContain("****1111");
  } finally {
    await switchTo(page, "admin");
    await saveSensitive(page, []);
  }
});

test("only admins open the masking rules page and save rules", async ({ page }) => {
  await switchTo(page, "operator");
  await page.goto("/admin/masking");
  await expect(page.getByTestId("forbidden")).toBeVisible();
  const res = await callServerAction(page.request, "/admin/masking", serverActionId("saveMaskingRulesAction"), [
    { rules: [], sensitive: [], expectedVersion: 1 },
  ]);
  expect(res.text).toContain("forbidden:masking:manage");
  await switchTo(page, "admin");
  await page.goto("/admin/masking");
  await expect(page.getByTestId("masking-editor")).toBeVisible();
  await expect(page.getByTestId("masking-rules")).toHaveValue(/"detector": "card"/);
});
