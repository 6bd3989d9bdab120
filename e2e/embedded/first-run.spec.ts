import { test, expect, type Page } from "@playwright/test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { deadLetterQueues, runId } from "../dead-letters";
import { awaitInconclusiveVerdict, continueAnywayToEnd, scanToDone, startRedrive } from "../redrive-steps";
import { ConsoleProcess, firstUsers, newcomerEnv, runNpm, runStartScript } from "./console-process";
import { KAFKA_STUCK_DEMO } from "../../lib/demo/stuck-group";

/**
 * The README's first command on its defaults, as a new user gets it: `./scripts/start.sh` with no
 * DATABASE_URL (the embedded PGlite database in a fresh folder), no config file (the local
 * brokers), the first users it creates and prints, and the demo letters it seeds. Every role signs
 * in; an operator opens a DLQ on each broker, scans one and redrives it to the end, an admin discards a
 * letter; the console is
 * stopped with SIGTERM and started again on the same folder, and everything is still there.
 */
const PORT = Number(process.env.E2E_EMBEDDED_PORT ?? 3200);
const baseURL = `http://127.0.0.1:${PORT}`;
const home = mkdtempSync(path.join(tmpdir(), "dlq-first-run-"));
const dataDir = path.join(home, ".data", "pglite");
const env = newcomerEnv(dataDir, PORT);

const RUN = runId();
const queues = deadLetterQueues("firstrun", RUN);
const N = 6;
const CLASS = "java.net.ConnectException";
const triagePath = `/dlqs/local-rabbitmq/${encodeURIComponent(queues.dlq)}/triage`;
const toDiscard = deadLetterQueues("firstrun-discard", RUN);

let server: ConsoleProcess | null = null;
let jobId = "";
let discardId = "";

test.describe.configure({ mode: "serial" });
test.use({ baseURL });

test.beforeAll(async () => {
  test.setTimeout(360_000);
  await queues.fill(
    Array.from({ length: N }, (_, i) => ({
      content: Buffer.from(JSON.stringify({ shipmentId: `shp-${RUN}-${i}` })),
      options: {
        persistent: true,
        messageId: `shp-${RUN}-${i}`,
        contentType: "application/json",
        headers: {
          "x-exception-stacktrace": `${CLASS}: Connection refused: carrier-api/10.0.0.${i}:443\n\tat com.acme.shipping.CarrierClient.book(CarrierClient.java:41)`,
        },
      },
    })),
  );
  await toDiscard.fill(
    Array.from({ length: 3 }, (_, i) => ({
      content: Buffer.from(`{"bad":${i}}`),
      options: {
        persistent: true,
        messageId: `bad-${RUN}-${i}`,
        headers: {
          "x-exception-stacktrace":
            "com.acme.SchemaException: field 'sku' is missing\n\tat com.acme.Orders.parse(Orders.java:12)",
        },
      },
    })),
  );
  server = await ConsoleProcess.start(env, baseURL);
});

test.afterAll(async () => {
  await server?.stop();
  await queues.remove();
  await toDiscard.remove();
  rmSync(home, { recursive: true, force: true });
});

async function signInAs(page: Page, role: "admin" | "operator" | "viewer") {
  const user = firstUsers(dataDir)[role];
  await page.goto("/signin");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("sign-out")).toBeVisible();
}

const dlqRow = (page: Page, name: string) =>
  page.getByTestId("dlq-row").filter({ has: page.getByRole("link", { name, exact: true }) });

test("start.sh set up a fresh embedded database: it printed three accounts and each role signs in and sees the DLQ list", async ({
  page,
}) => {
  expect(server!.log).toContain(`embedded PGlite in ${dataDir}`);
  expect(server!.log).toContain("created the first users");
  expect(server!.log).toContain("seeding demo dead letters");
  for (const role of ["admin", "operator", "viewer"] as const) {
    expect(server!.log).toContain(firstUsers(dataDir)[role].password); // printed for the user
    await signInAs(page, role);
    await expect(dlqRow(page, "demo.orders.dlq")).toBeVisible();
    await page.getByTestId("sign-out").click();
    await expect(page).toHaveURL(/\/signin/);
  }
});

test("an operator opens a DLQ on each broker", async ({ page }) => {
  await signInAs(page, "operator");
  for (const [connection, dlq] of [
    ["local-rabbitmq", "demo.orders.dlq"],
    ["local-sqs", "demo-orders-dlq"],
    ["local-kafka", "demo.orders.DLT"],
    ["local-pulsar", "public/demo/payments-payments-service-DLQ"],
  ]) {
    await page.goto(`/dlqs/${connection}/${encodeURIComponent(dlq)}`);
    await expect(page.getByTestId("dlq-name")).toHaveText(dlq);
    await expect(page.getByTestId("letter-row").first()).toBeVisible();
  }
});

test("the operations sampler runs on the embedded database: each broker's demo DLQ gets its sampled figures", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signInAs(page, "viewer");
  const line = (connection: string, dlq: string) =>
    new RegExp(
      `^dlq_console_dlq_depth\\{connection="${connection}",queue="${dlq.replace(/\./g, "\\.")}",owner="[^"]*"\\} \\d+$`,
      "m",
    );
  const metrics = async () => {
    const res = await page.request.get("/api/metrics");
    expect(res.status()).toBe(200);
    return res.text();
  };
  // A broker slower than a round's inspect timeout (a loaded machine) is in a later round: wait for all four.
  const demoDlqs = [
    line("local-rabbitmq", "demo.orders.dlq"),
    line("local-sqs", "demo-orders-dlq"),
    line("local-kafka", "demo.orders.DLT"),
    line("local-pulsar", "public/demo/payments-payments-service-DLQ"),
  ];
  await expect
    .poll(
      async () => {
        const text = await metrics();
        return demoDlqs.filter((re) => !re.test(text)).map(String);
      },
      {
        timeout: 90_000,
        intervals: [2_000],
      },
    )
    .toEqual([]);
  const text = await metrics();
  for (const re of demoDlqs) expect(text).toMatch(re);
  expect(text).toMatch(
    /^dlq_console_dlq_sample_up\{connection="local-rabbitmq",queue="demo\.orders\.dlq",owner="[^"]*"\} 1$/m,
  );
});

test("the consumer-group sampler runs on the embedded database: the demo's payments group is listed with its lag, and the record it waits on opens", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signInAs(page, "viewer");
  const row = page.locator(`[data-testid="group-row"][data-group="${KAFKA_STUCK_DEMO.group}"]`);
  await expect(async () => {
    await page.goto("/groups");
    await expect(row).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 90_000, intervals: [2_000] });
  await expect(row).toContainText("4"); // four records wait behind the poison one
  await row.getByTestId("group-link").click();
  const p = page.locator(`[data-testid="partition-row"][data-partition="${KAFKA_STUCK_DEMO.partition}"]`);
  await expect(p).toContainText(String(KAFKA_STUCK_DEMO.offset));
  await p.getByTestId("partition-link").click();
  await expect(page.getByTestId("partition-record")).toHaveAttribute("data-offset", String(KAFKA_STUCK_DEMO.offset));
  await expect(page.getByTestId("payload-view")).toContainText("12,50 EUR");
});

test("on the embedded database an admin moves the payments group's poison record to its DLT (created by the default config) and the offset moves past it", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signInAs(page, "admin");
  const { group, topic, partition, offset } = KAFKA_STUCK_DEMO;
  await page.goto(`/groups/local-kafka/${encodeURIComponent(group)}/${encodeURIComponent(topic)}/${partition}`);
  await page.getByTestId("skip-preview").click();
  await expect(page.getByTestId("skip-count")).toContainText("1 record");
  await expect(page.getByTestId("skip-dlt")).toHaveText(`${topic}.DLT`);
  await page.getByTestId("skip-reason").fill("Amount in a locale format the parser refuses (first-run check)");
  await page.getByTestId("skip-start").click();
  const job = page.getByTestId("skip-job").first();
  await expect(job).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("skip-done")).toContainText(`from ${offset} to ${offset + 1}`);
  await page.getByTestId("skip-copy-link").first().click();
  await expect(page.getByTestId("payload-view")).toContainText("12,50 EUR");
  await expect(page.getByTestId("letter-origin")).toContainText(topic);
});

test("an operator scans a DLQ, sees its group and redrives it to the end: sample, inconclusive verdict (nobody reads the work queue), continue anyway with a reason, the rest; audited", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await signInAs(page, "operator");
  await page.goto(triagePath);
  await scanToDone(page);
  const group = page.getByTestId("group-row");
  await expect(group).toHaveCount(1);
  await expect(group).toHaveAttribute("data-count", String(N));
  await expect(group).toContainText(CLASS);
  await group.getByTestId("group-redrive").click();
  ({ jobId } = await startRedrive(page, {
    count: N,
    fix: "carrier-api allow-list fixed (SHIP-88)",
    sample: 2,
    watchSeconds: 2,
    rate: 20,
  }));
  // Nobody consumes the work queue: none came back, but that proves nothing, and the page says why.
  await awaitInconclusiveVerdict(page, 2, [
    { target: queues.work, state: "no_reader", text: `No consumer on queue "${queues.work}"` },
  ]);
  await continueAnywayToEnd(page, N, {
    reason: "shipping-consumer is deployed after the redrive (SHIP-88)",
    by: firstUsers(dataDir).operator.email,
  });
  await expect.poll(() => queues.depth(queues.work)).toBe(N);
  expect(await queues.depth(queues.dlq)).toBe(0);

  await page.goto(`/audit?queue=${encodeURIComponent(queues.dlq)}&action=letter.redrive`);
  await expect(page.getByTestId("audit-row")).toHaveCount(N);
  await page.goto(`/audit?queue=${encodeURIComponent(queues.dlq)}&action=redrive.continue_anyway`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
});

test("an admin discards a letter with a reason: it leaves the DLQ for the archive", async ({ page }) => {
  test.setTimeout(120_000);
  await signInAs(page, "admin");
  await page.goto(`/dlqs/local-rabbitmq/${encodeURIComponent(toDiscard.dlq)}/triage`);
  await scanToDone(page);
  const row = page.getByTestId("triage-letter-row").first();
  await row.getByTestId("pick-letter").check();
  await page.getByTestId("discard-selected").click();
  await expect(page.getByTestId("discard-scope")).toHaveAttribute("data-count", "1");
  await page.getByTestId("discard-reason").fill("Orders without a SKU can never be processed (ORD-7)");
  await page.getByTestId("discard-confirm").check();
  await page.getByTestId("discard-submit").click();
  await expect(page).toHaveURL(/\/discard\/[0-9a-f-]{36}$/);
  discardId = page.url().split("/").pop()!;
  await expect(page.getByTestId("discard-job")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("dn-discarded")).toHaveAttribute("data-value", "1");
  expect(await toDiscard.depth(toDiscard.dlq)).toBe(2);
});

test("while it runs, a second start.sh and the audit check each say in one sentence why not, and change nothing", () => {
  const again = runStartScript(env);
  expect(again.status).not.toBe(0);
  expect(again.output).toMatch(/DLQ Console is already running on .*pglite \(pid \d+\)/);
  expect(again.output).not.toMatch(/\n\s+at /); // no stack trace

  const otherFolder = runStartScript(newcomerEnv(path.join(home, "other", "pglite"), PORT));
  expect(otherFolder.status).not.toBe(0);
  expect(otherFolder.output).toContain(`Port ${PORT} on 127.0.0.1 is already in use`);
  expect(existsSync(path.join(home, "other"))).toBe(false);

  const verify = runNpm("audit:verify", env);
  expect(verify.status).toBe(2);
  expect(verify.output).toContain("most likely the running console");
  expect(verify.output).toContain("Audit page (Verify chain)");
});

test("stopped with SIGTERM and started again on the same folder: users, scan, redrive and audit are kept; nothing is created twice; the chain verifies", async ({
  page,
}) => {
  test.setTimeout(240_000);
  expect(await server!.stop()).toBe(0);
  expect(server!.log).toContain("[shutdown] SIGTERM: closed cleanly");
  expect(existsSync(`${dataDir}.lock`)).toBe(false);

  const verify = runNpm("audit:verify", env); // the embedded database, with the console stopped
  expect(verify.output).toMatch(/Audit chain intact: \d+ row\(s\) checked\./);
  expect(verify.status).toBe(0);

  server = await ConsoleProcess.start(env, baseURL);
  expect(server.log).toContain("first users exist");
  expect(server.log).not.toContain("created the first users");
  expect(server.log).toMatch(/demo dead letters were seeded on .* kept as they are/);
  expect(server.log).not.toContain("seeding demo dead letters");

  await signInAs(page, "admin"); // the same password as before the restart
  await page.goto(triagePath);
  await expect(page.getByTestId("index-age")).toContainText("Index as of");
  await expect(page.getByTestId("group-row")).toHaveAttribute("data-count", String(N));
  await page.goto("/redrives");
  await expect(page.locator(`[data-testid="redrive-row"][data-id="${jobId}"]`)).toHaveAttribute(
    "data-state",
    "succeeded",
  );
  await page.goto("/discards");
  await expect(page.locator(`[data-testid="discard-row"][data-id="${discardId}"]`)).toHaveAttribute(
    "data-state",
    "succeeded",
  );
  await page.goto(`/audit?queue=${encodeURIComponent(queues.dlq)}&action=redrive.start`);
  await expect(page.getByTestId("audit-row")).toHaveCount(1);
  await page.goto(`/audit?queue=${encodeURIComponent(queues.dlq)}&action=letter.redrive`);
  await expect(page.getByTestId("audit-row")).toHaveCount(N);
  await page.goto("/audit");
  await page.getByTestId("audit-verify").click();
  await expect(page.getByTestId("audit-verify-result")).toContainText("Chain intact");
});
