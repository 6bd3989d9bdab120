import { test, expect } from "@playwright/test";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { callServerAction, serverActionId, loadSession } from "./fixtures";

/**
 * Alert rules in the browser: an admin creates one (a refused webhook target first, with the reason
 * shown), opens its page, finds it in the list; a viewer sees it with no create, edit, test or
 * delete control, is refused the new-rule page, and the server refuses and audits the viewer's
 * direct calls of every alert action. The webhook's path (which may hold a token) never reaches a
 * page or the audit log.
 */
const DB_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e";
const RUN = randomUUID().slice(0, 8);
const NAME = `e2e alert ${RUN}`;
const GROUP_NAME = `e2e group alert ${RUN}`;
const TOKEN = `e2e-token-${RUN}`;
// A public https address (a literal: no lookup needed on a machine without DNS). The rule's scope
// matches no DLQ and no test message is sent, so nothing is ever posted to it.
const WEBHOOK = `https://93.184.215.14/services/T000/B000/${TOKEN}`;
const PATTERN = `e2e-alerts-none-${RUN}-*`;

let ruleId = "";

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: DB_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

test.describe.configure({ mode: "serial" });

test.afterAll(async () => {
  await sql("DELETE FROM alert_rules WHERE name LIKE $1 OR name = $2", [`${NAME}%`, GROUP_NAME]);
});

test("an admin creates an alert rule", async ({ page }) => {
  await loadSession(page, "admin");
  await page.goto("/alerts");
  await page.getByTestId("new-alert-rule").click();
  await expect(page).toHaveURL(/\/alerts\/new$/);

  const form = page.getByTestId("alert-rule-form");
  await form.getByTestId("alert-rule-name").fill(NAME);
  await form.getByTestId("alert-rule-kind").selectOption("depth_above");
  await form.getByTestId("alert-rule-threshold").fill("250");
  await form.getByTestId("alert-rule-connection").selectOption("local-rabbitmq");
  await form.getByTestId("alert-rule-pattern").fill(PATTERN);

  // A cloud metadata address is refused at save, with the reason.
  await form.getByTestId("alert-rule-webhook").fill("http://169.254.169.254/latest/meta-data/");
  await form.getByTestId("alert-rule-submit").click();
  await expect(page.getByTestId("alert-rule-error")).toHaveText(/169\.254\.169\.254.*(cloud metadata|must use https)/);
  await expect(page).toHaveURL(/\/alerts\/new$/);

  await form.getByTestId("alert-rule-webhook").fill(WEBHOOK);
  await form.getByTestId("alert-rule-submit").click();
  await expect(page).toHaveURL(/\/alerts\/[0-9a-f-]{36}$/);
  ruleId = page.url().split("/").pop()!;

  await expect(page.getByTestId("alert-rule-title")).toHaveText(NAME);
  await expect(page.getByTestId("alert-rule-condition")).toHaveText("depth above 250");
  await expect(page.getByTestId("alert-rule-scope")).toHaveText(`connection local-rabbitmq, DLQs ${PATTERN}`);
  await expect(page.getByTestId("alert-rule-webhook-origin")).toContainText("https://93.184.215.14");
  await expect(page.getByTestId("alert-rule-controls")).toBeVisible();
  await expect(page.getByTestId("alert-deliveries")).toBeVisible();
  expect(await page.content()).not.toContain(TOKEN);

  // The edit form never carries the saved URL either.
  await page.getByTestId("alert-rule-edit").click();
  await expect(page.getByTestId("alert-rule-name")).toHaveValue(NAME);
  await expect(page.getByTestId("alert-rule-threshold")).toHaveValue("250");
  await expect(page.getByTestId("alert-rule-webhook")).toHaveValue("");
  expect(await page.content()).not.toContain(TOKEN);

  await page.goto("/alerts");
  const row = page.locator(`[data-testid="alert-rule-row"][data-name="${NAME}"]`);
  await expect(row).toBeVisible();
  await expect(row).toContainText("depth above 250");
  await expect(row).toContainText("https://93.184.215.14");

  // On record with the rule's name and scope; the webhook as its origin only.
  const audit = await sql<{ outcome: string; details: Record<string, unknown> }>(
    "SELECT outcome, details FROM audit_log WHERE action = 'alert.rule_create' AND details->>'ruleId' = $1",
    [ruleId],
  );
  expect(audit).toHaveLength(1);
  expect(audit[0].outcome).toBe("success");
  expect(audit[0].details).toMatchObject({
    name: NAME,
    webhook: "https://93.184.215.14",
    scope: { connectionId: "local-rabbitmq", queuePattern: PATTERN },
  });
  expect(JSON.stringify(audit[0].details)).not.toContain(TOKEN);
});

test("an admin creates a rule on failure groups: a group that grows by n letters within m minutes", async ({
  page,
}) => {
  await loadSession(page, "admin");
  await page.goto("/alerts/new");
  const form = page.getByTestId("alert-rule-form");
  await form.getByTestId("alert-rule-name").fill(GROUP_NAME);
  await form.getByTestId("alert-rule-kind").selectOption("group_grew");
  await expect(form.getByTestId("alert-rule-threshold")).toHaveCount(0);
  await expect(form.getByTestId("alert-rule-group-hint")).toContainText("Ignored groups never alert.");
  await form.getByTestId("alert-rule-letters").fill("40");
  await form.getByTestId("alert-rule-minutes").fill("15");
  await form.getByTestId("alert-rule-pattern").fill(PATTERN);
  await form.getByTestId("alert-rule-webhook").fill(WEBHOOK);
  await form.getByTestId("alert-rule-submit").click();
  await expect(page).toHaveURL(/\/alerts\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("alert-rule-condition")).toHaveText(
    "a failure group grew by 40 letters or more within 15 min",
  );

  // Editing keeps both values; a new group rule needs none.
  await page.getByTestId("alert-rule-edit").click();
  await expect(page.getByTestId("alert-rule-letters")).toHaveValue("40");
  await expect(page.getByTestId("alert-rule-minutes")).toHaveValue("15");
  await page.getByTestId("alert-rule-kind").selectOption("group_new");
  await expect(page.getByTestId("alert-rule-letters")).toHaveCount(0);
  await page.getByTestId("alert-rule-submit").click();
  await expect(page).toHaveURL(/\/alerts\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("alert-rule-condition")).toHaveText("a new failure group");
});

test("a viewer sees the rule without controls, and the server refuses the viewer's direct action calls", async ({
  page,
}) => {
  expect(ruleId).not.toBe("");
  await loadSession(page, "viewer");
  await page.goto("/alerts");
  await expect(page.locator(`[data-testid="alert-rule-row"][data-name="${NAME}"]`)).toBeVisible();
  await expect(page.getByTestId("new-alert-rule")).toHaveCount(0);

  await page.goto(`/alerts/${ruleId}`);
  await expect(page.getByTestId("alert-rule-title")).toHaveText(NAME);
  await expect(page.getByTestId("alert-deliveries")).toBeVisible();
  await expect(page.getByTestId("alert-rule-controls")).toHaveCount(0);
  await expect(page.getByTestId("alert-rule-edit")).toHaveCount(0);
  expect(await page.content()).not.toContain(TOKEN);

  for (const path of ["/alerts/new", `/alerts/${ruleId}/edit`]) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBe(403);
    await expect(page.getByTestId("forbidden"), path).toBeVisible();
    await expect(page.getByTestId("alert-rule-form"), path).toHaveCount(0);
  }

  const started = new Date(Date.now() - 1000);
  const calls = [
    {
      name: "createAlertRuleAction",
      args: [{ name: `${NAME} by a viewer`, kind: "depth_above", params: { depth: 1 }, webhookUrl: WEBHOOK }],
      action: "alert.rule_create",
    },
    {
      name: "updateAlertRuleAction",
      args: [{ id: ruleId, name: `${NAME} renamed`, kind: "depth_above", params: { depth: 1 }, enabled: false }],
      action: "alert.rule_update",
    },
    { name: "sendTestAlertAction", args: [{ id: ruleId }], action: "alert.test_send" },
    { name: "deleteAlertRuleAction", args: [{ id: ruleId }], action: "alert.rule_delete" },
  ];
  for (const c of calls) {
    const res = await callServerAction(page.request, "/alerts", serverActionId(c.name), c.args);
    expect(res.status, c.name).toBe(200);
    expect(res.text, c.name).toContain("forbidden:ops:manage");
    expect(res.text, c.name).not.toContain('"ok":true');
  }

  // Nothing changed.
  const rules = await sql<{ name: string; enabled: boolean }>(
    "SELECT name, enabled FROM alert_rules WHERE name LIKE $1 ORDER BY name",
    [`${NAME}%`],
  );
  expect(rules).toEqual([{ name: NAME, enabled: true }]);

  // Every refusal is on record with the viewer as actor.
  const denied = await sql<{ action: string }>(
    "SELECT action FROM audit_log WHERE outcome = 'denied' AND actor_role = 'viewer' AND action LIKE 'alert.%' AND at >= $1",
    [started],
  );
  for (const c of calls)
    expect(
      denied.map((d) => d.action),
      c.action,
    ).toContain(c.action);
});
