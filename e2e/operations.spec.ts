import { test, expect, type Page } from "@playwright/test";
import amqp from "amqplib";
import pg from "pg";
import { callServerAction, dlqPath, serverActionId, loadSession } from "./fixtures";
import { runId } from "./dead-letters";

/**
 * Operations in the browser, on the local RabbitMQ, sampled every 5 s (e2e/dlq-console.e2e.config.json):
 * a DLQ that keeps filling, whose own x-message-ttl will soon expire its oldest letter, comes first
 * in the overview with its trend and "lost in"; its health page draws depth and inflow; its TTL is
 * a finding with its fix, which an operator acknowledges (a viewer cannot, not even by calling the
 * action); an admin names its owner on the Owners page and the DLQ shows it.
 *
 * The letters carry the AMQP timestamp property, which dead-lettering keeps and the management API
 * gives as the head message's timestamp: the oldest letter is stamped 100 min ago, the DLQ keeps
 * letters 2 h, so the console says it is lost in under 20 min (it errs early: RabbitMQ's TTL runs
 * from the letter's arrival in the DLQ).
 */
const URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const DB_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e";
const CONNECTION = "local-rabbitmq";
const RUN = runId();
const DLX = `e2e.ops.dlx.${RUN}`;
/** Keeps filling, with a TTL of its own and an old head letter. */
const FILLING = { source: `e2e.ops.${RUN}.orders`, dlq: `e2e.ops.${RUN}.orders.dlq` };
/** Deeper, but quiet: no TTL, no letters after the first look. */
const QUIET = { source: `e2e.ops.${RUN}.audit`, dlq: `e2e.ops.${RUN}.audit.dlq` };
const TTL_MS = 2 * 3600_000;
const HEAD_AGE_MIN = 100;
const TEAM = `Ops team ${RUN}`;
const CONTACT = `#ops-oncall-${RUN}`;

test.describe.configure({ mode: "serial" });

let conn: amqp.ChannelModel;

/** Publishes `n` letters to `source` and rejects each, so RabbitMQ dead-letters them for real ("rejected"). */
async function deadLetter(source: string, dlq: string, n: number, timestamp: number) {
  const ch = await conn.createConfirmChannel();
  const before = (await ch.checkQueue(dlq)).messageCount;
  for (let i = 0; i < n; i++)
    ch.sendToQueue(source, Buffer.from(JSON.stringify({ order: i, run: RUN })), {
      persistent: true,
      contentType: "application/json",
      timestamp,
    });
  await ch.waitForConfirms();
  for (let i = 0; i < n; i++) {
    const m = await ch.get(source, { noAck: false });
    if (m) ch.nack(m, false, false);
  }
  for (let i = 0; i < 200 && (await ch.checkQueue(dlq)).messageCount < before + n; i++)
    await new Promise((r) => setTimeout(r, 50));
  expect((await ch.checkQueue(dlq)).messageCount).toBe(before + n);
  await ch.close();
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

interface OverviewRow {
  connectionId: string;
  queue: string;
  depth: number | null;
  inflowPerMin: number | null;
  oldestSource: string | null;
  deadlineAt: string | null;
}

/** The sampler's figures for one DLQ, as the overview route gives them to the signed-in page. */
async function sampled(page: Page, queue: string): Promise<OverviewRow | null> {
  const res = await page.request.get("/api/operations/overview");
  expect(res.status()).toBe(200);
  const body = (await res.json()) as { data: { rows: OverviewRow[] } };
  return body.data.rows.find((r) => r.connectionId === CONNECTION && r.queue === queue) ?? null;
}

const healthPath = (queue: string, range?: string) =>
  `${dlqPath(queue, CONNECTION)}/health${range ? `?range=${range}` : ""}`;
const findingsPath = (queue: string) => `/findings?connection=${CONNECTION}&dlq=${encodeURIComponent(queue)}`;
const rowOf = (page: Page, queue: string) =>
  page.locator(`[data-testid="dlq-row"][data-connection-id="${CONNECTION}"][data-queue="${queue}"]`);

test.beforeAll(async () => {
  conn = await amqp.connect(URL);
  const ch = await conn.createChannel();
  await ch.assertExchange(DLX, "direct", { durable: false, autoDelete: false });
  await ch.assertQueue(FILLING.dlq, { durable: true, arguments: { "x-message-ttl": TTL_MS } });
  await ch.bindQueue(FILLING.dlq, DLX, FILLING.dlq);
  await ch.assertQueue(FILLING.source, {
    durable: true,
    arguments: { "x-dead-letter-exchange": DLX, "x-dead-letter-routing-key": FILLING.dlq },
  });
  await ch.assertQueue(QUIET.dlq, { durable: true });
  await ch.bindQueue(QUIET.dlq, DLX, QUIET.dlq);
  await ch.assertQueue(QUIET.source, {
    durable: true,
    arguments: { "x-dead-letter-exchange": DLX, "x-dead-letter-routing-key": QUIET.dlq },
  });
  await ch.close();
  await deadLetter(FILLING.source, FILLING.dlq, 2, nowSeconds() - HEAD_AGE_MIN * 60);
  await deadLetter(QUIET.source, QUIET.dlq, 8, nowSeconds() - 5 * 60);
});

test.afterAll(async () => {
  const ch = await conn.createChannel();
  for (const q of [FILLING.source, FILLING.dlq, QUIET.source, QUIET.dlq])
    await ch.deleteQueue(q).catch(() => undefined);
  await ch.deleteExchange(DLX).catch(() => undefined);
  await conn.close().catch(() => undefined);
  // Only when the owner test failed before deleting its entry through the page.
  const db = new pg.Client({ connectionString: DB_URL });
  await db.connect();
  try {
    await db.query("DELETE FROM dlq_owners WHERE team = $1", [TEAM]);
  } finally {
    await db.end();
  }
});

test("the overview puts a filling DLQ first, with its trend and when its oldest letter is lost", async ({ page }) => {
  test.setTimeout(180_000);
  await loadSession(page, "operator");

  // The sampler sees both DLQs (every 5 s; the management API's figures lag up to 5 s more).
  await expect
    .poll(async () => (await sampled(page, FILLING.dlq))?.depth ?? null, { timeout: 60_000, intervals: [1000] })
    .toBe(2);
  await expect
    .poll(async () => (await sampled(page, QUIET.dlq))?.depth ?? null, { timeout: 60_000, intervals: [1000] })
    .toBe(8);
  // More letters arrive after it was first seen: it is filling.
  await deadLetter(FILLING.source, FILLING.dlq, 3, nowSeconds());
  await expect
    .poll(
      async () => {
        const r = await sampled(page, FILLING.dlq);
        return r && r.depth === 5 && (r.inflowPerMin ?? 0) > 0 && r.oldestSource === "broker" && r.deadlineAt !== null;
      },
      { timeout: 60_000, intervals: [1000] },
    )
    .toBe(true);

  await page.goto("/");
  const row = rowOf(page, FILLING.dlq);
  await expect(row).toHaveAttribute("data-sampled", "yes");
  const lost = row.getByTestId("dlq-lost");
  await expect(lost).toHaveText(/^lost in \d+ min$/);
  await expect(lost).toHaveAttribute("data-tone", "urgent");
  await expect(lost).toHaveAttribute("title", /from the broker, sampled/);
  await expect(row.getByTestId("dlq-oldest")).toHaveText(/^1 h \d+ min$/);
  await expect(row.getByTestId("dlq-oldest")).toHaveAttribute("data-source", "broker");
  await expect(row.getByTestId("dlq-inflow")).toHaveText(/^\d+(\.\d+)?\/min$/);
  expect(parseFloat((await row.getByTestId("dlq-inflow").textContent()) ?? "0")).toBeGreaterThan(0);
  await expect(row.getByTestId("dlq-depth")).toHaveText("5");
  const trend = row.getByTestId("dlq-trend");
  await expect(trend).toBeVisible();
  expect(Number(await trend.getAttribute("data-points"))).toBeGreaterThan(0);
  await expect(trend).toHaveAttribute("aria-label", /Depth over the last hour/);
  await expect(row.getByTestId("dlq-findings")).toHaveAttribute("data-severity", "critical");

  // Needs attention first: only DLQs whose letters are as close to being lost come before it.
  const order = await page.getByTestId("dlq-row").evaluateAll((rows) =>
    rows.map((r) => ({
      queue: r.getAttribute("data-queue"),
      tone: r.querySelector('[data-testid="dlq-lost"]')?.getAttribute("data-tone") ?? null,
    })),
  );
  const at = order.findIndex((r) => r.queue === FILLING.dlq);
  expect(at).toBeGreaterThanOrEqual(0);
  for (const before of order.slice(0, at))
    expect(["past", "urgent"], `${before.queue} is listed before the filling DLQ`).toContain(before.tone);
  expect(order.findIndex((r) => r.queue === QUIET.dlq)).toBeGreaterThan(at);

  // Among this run's DLQs, the filling one is first though the quiet one is deeper; a column sort
  // changes that, lives in the URL, and "needs attention first" restores the default.
  await page.goto(`/?q=${encodeURIComponent(`e2e.ops.${RUN}.`)}`);
  const rows = page.getByTestId("dlq-row");
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toHaveAttribute("data-queue", FILLING.dlq);
  await expect(rows.nth(1)).toHaveAttribute("data-queue", QUIET.dlq);
  await page.getByTestId("sort-depth").click();
  await expect(rows.nth(0)).toHaveAttribute("data-queue", QUIET.dlq);
  await expect(page).toHaveURL(/[?&]sort=depth/);
  await page.reload();
  await expect(rows.nth(0)).toHaveAttribute("data-queue", QUIET.dlq);
  await page.getByTestId("sort-attention").click();
  await expect(rows.nth(0)).toHaveAttribute("data-queue", FILLING.dlq);
  await expect(page).not.toHaveURL(/sort=/);
});

test("a DLQ's health page draws depth and inflow over the chosen range", async ({ page }) => {
  test.setTimeout(120_000);
  await loadSession(page, "viewer");
  // Every tab of the DLQ says when its oldest letter is lost, and leads to the charts.
  await page.goto(dlqPath(FILLING.dlq, CONNECTION));
  const strip = page.getByTestId("dlq-ops");
  await expect(strip.getByTestId("dlq-ops-lost")).toHaveText(/^lost in \d+ min$/);
  await strip.getByTestId("dlq-ops-link").click();
  await expect(page).toHaveURL(new RegExp(`${healthPath(FILLING.dlq).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));

  await expect(page.getByTestId("ops-lost")).toHaveText(/^lost in \d+ min$/);
  await expect(page.getByTestId("ops-oldest")).toHaveAttribute("data-source", "broker");
  await expect(page.getByTestId("ops-retention")).toHaveText("2 h");
  for (const range of ["hour", "day", "week"] as const) {
    await page.getByTestId(`range-${range}`).click();
    if (range !== "day") await expect(page).toHaveURL(new RegExp(`\\?range=${range}$`));
    await expect(page.getByTestId("dlq-charts")).toHaveAttribute("data-range", range);
    for (const chart of ["chart-depth", "chart-inflow"]) {
      const figure = page.getByTestId(chart);
      await expect(figure.locator("canvas")).toBeVisible();
      expect(Number(await figure.getAttribute("data-points")), `${chart} over the ${range}`).toBeGreaterThan(0);
    }
  }
  // The depth series holds the letters the DLQ has now.
  const res = await page.request.get(
    `/api/operations/dlq?connectionId=${CONNECTION}&queue=${encodeURIComponent(FILLING.dlq)}&range=hour`,
  );
  const series = (await res.json()) as {
    data: { points: Array<{ depth: number | null; inflowPerMin: number | null }> };
  };
  expect(series.data.points.some((p) => p.depth === 5)).toBe(true);
  expect(series.data.points.some((p) => (p.inflowPerMin ?? 0) > 0)).toBe(true);
  // Its open findings, with their fix, are on the same page.
  const ttl = page.locator('[data-testid="finding-row"][data-code="rabbitmq.dlq_message_ttl"]');
  await expect(ttl.getByTestId("finding-fix")).toContainText("x-message-ttl");
});

test("a finding is listed with its fix; an operator acknowledges it, a viewer cannot", async ({ page, browser }) => {
  test.setTimeout(120_000);
  await loadSession(page, "operator");
  await page.goto(`/?q=${encodeURIComponent(FILLING.dlq)}`);
  await rowOf(page, FILLING.dlq).getByTestId("dlq-findings").click();
  await expect(page).toHaveURL(/\/findings\?/);
  await expect(page.getByTestId("filter-dlq")).toHaveValue(FILLING.dlq);
  const finding = page.locator(
    `[data-testid="finding-row"][data-code="rabbitmq.dlq_message_ttl"][data-queue="${FILLING.dlq}"]`,
  );
  await expect(finding).toHaveCount(1);
  await expect(finding).toHaveAttribute("data-severity", "critical");
  await expect(finding.getByTestId("finding-object")).toContainText(`queue ${FILLING.dlq}`);
  await expect(finding.getByTestId("finding-why")).toContainText("expires letters 2 hours");
  await expect(finding.getByTestId("finding-fix")).toContainText("declare a new DLQ without x-message-ttl");
  // Nobody owns it yet: that is a finding too.
  await expect(
    page.locator(`[data-testid="finding-row"][data-code="dlq.no_owner"][data-queue="${FILLING.dlq}"]`),
  ).toHaveCount(1);

  await finding.getByTestId("finding-ack").click();
  await expect(finding.getByTestId("finding-ack-by")).toContainText("operator@e2e.test");
  await expect(finding.getByTestId("finding-ack")).toHaveCount(0);
  // Acknowledged is not fixed: it stays open.
  await expect(finding).toHaveAttribute("data-state", "open");

  const viewer = await browser.newContext();
  const vpage = await viewer.newPage();
  try {
    await loadSession(vpage, "viewer");
    await vpage.goto(findingsPath(FILLING.dlq));
    const seen = vpage.locator(
      `[data-testid="finding-row"][data-code="rabbitmq.dlq_message_ttl"][data-queue="${FILLING.dlq}"]`,
    );
    await expect(seen.getByTestId("finding-fix")).toContainText("x-message-ttl");
    await expect(vpage.getByTestId("finding-ack")).toHaveCount(0);
    const id = await seen.getAttribute("data-id");
    const res = await callServerAction(
      vpage.request,
      findingsPath(FILLING.dlq),
      serverActionId("acknowledgeFindingAction"),
      [{ id }],
    );
    expect(res.text).toContain("forbidden:ops:acknowledge");
    expect(res.text).not.toContain('"ok":true');
  } finally {
    await viewer.close();
  }
});

test("an admin names the DLQ's owner on the Owners page and the DLQ shows it", async ({ page, browser }) => {
  test.setTimeout(120_000);
  await loadSession(page, "admin");
  await page.goto("/");
  await page.getByTestId("nav-owners").click();
  await expect(page).toHaveURL(/\/owners$/);
  // The config file's entries are listed after the console's, read-only.
  const fromConfig = page.locator('[data-testid="owner-row"][data-source="config"][data-queue-pattern="demo.*"]');
  await expect(fromConfig.getByTestId("owner-config-badge")).toBeVisible();
  await expect(fromConfig.getByTestId("owner-edit")).toHaveCount(0);

  const form = page.getByTestId("owner-add-form");
  await form.getByTestId("owner-position").fill("0");
  await form.getByTestId("owner-connection").fill(CONNECTION);
  await form.getByTestId("owner-queue").fill(FILLING.dlq);
  await form.getByTestId("owner-team").fill(TEAM);
  await form.getByTestId("owner-contact").fill(CONTACT);
  await form.getByTestId("owner-save").click();
  await expect(page.getByTestId("owner-saved")).toBeVisible();
  const entry = page.locator(`[data-testid="owner-row"][data-source="console"][data-queue-pattern="${FILLING.dlq}"]`);
  await expect(entry).toHaveAttribute("data-team", TEAM);
  const id = await entry.getAttribute("data-id");
  expect(id).toMatch(/^[0-9a-f-]{36}$/);

  // Where the DLQ is named, its owner is shown: the overview and its health page.
  await page.goto(`/?q=${encodeURIComponent(FILLING.dlq)}`);
  const owner = rowOf(page, FILLING.dlq).getByTestId("dlq-owner");
  await expect(owner).toHaveAttribute("data-owner", TEAM);
  await expect(owner).toContainText(CONTACT);
  await page.goto(healthPath(FILLING.dlq));
  await expect(page.getByTestId("ops-owner")).toHaveAttribute("data-owner", TEAM);
  await expect(page.getByTestId("ops-owner")).toContainText("set on the Owners page");

  // Neither a viewer nor an operator may change owners, whatever they send.
  const other = await browser.newContext();
  const opage = await other.newPage();
  try {
    await loadSession(opage, "operator");
    await opage.goto("/owners");
    await expect(opage.getByTestId("owner-add-form")).toHaveCount(0);
    await expect(opage.getByTestId("owner-edit")).toHaveCount(0);
    const save = await callServerAction(opage.request, "/owners", serverActionId("saveOwnerAction"), [
      { queuePattern: "*", team: "Mallory", contact: "x" },
    ]);
    expect(save.text).toContain("forbidden:ops:manage");
    expect(save.text).not.toContain('"ok":true');
    const del = await callServerAction(opage.request, "/owners", serverActionId("deleteOwnerAction"), [{ id }]);
    expect(del.text).toContain("forbidden:ops:manage");
  } finally {
    await other.close();
  }

  // The admin deletes the entry again.
  await page.goto("/owners");
  await entry.getByTestId("owner-delete").click();
  await entry.getByTestId("owner-delete-confirm").click();
  await expect(entry).toHaveCount(0);
  await page.goto(`/?q=${encodeURIComponent(FILLING.dlq)}`);
  await expect(rowOf(page, FILLING.dlq).getByTestId("dlq-owner")).toHaveAttribute("data-owner", "");
});
