import { test, expect, type Page } from "@playwright/test";
import amqp from "amqplib";
import { Kafka, logLevel } from "kafkajs";
import { mendKafkajs } from "@/lib/brokers/kafka/mend";
import { createTopic } from "./kafka-topics";
import pg from "pg";
import { callServerAction, dlqPath, loadSession, serverActionId } from "./fixtures";
import { runId } from "./dead-letters";
import { scanToDone } from "./redrive-steps";

/**
 * The overview says which DLQ needs someone and why: each row names its top failure (the largest
 * triage group's class or reason, with its share and where it comes from) and fits a laptop's
 * screen. /findings folds identical findings into one line per kind, critical kinds first, and an
 * operator acknowledges a whole kind at once (a viewer is refused by the server).
 *
 * The kinds this spec acknowledges come from its own RabbitMQ DLQs (a length limit, found by the
 * sampler every 5 s on the local broker), so no other spec's findings change under it.
 */
const URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const DB_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e";
const CONNECTION = "local-rabbitmq";
const RUN = runId();
const DLX = `e2e.ovw.dlx.${RUN}`;
/** A demo DLQ the seed fills with letters of several failures (see e2e/triage.spec.ts). */
const SCANNED = "demo.billing.dlq";
/** Two DLQs capped in length (a warning kind of finding), one that deletes itself when idle (a critical kind). */
const CAPPED = [`e2e.ovw.${RUN}.a.dlq`, `e2e.ovw.${RUN}.b.dlq`];
const EXPIRING = `e2e.ovw.${RUN}.c.dlq`;
/**
 * The widest content a row can hold, so the fit test does not depend on what other specs leave:
 * a long RabbitMQ name without a break, with a direction control and a zero-width space, and a
 * Kafka DLT with a long name whose letters name a long cause class (its sample reads for free).
 */
const WIDE = `e2e.ovw.${RUN}.${"w".repeat(120)}\u202Egpj.exe\u200B.dlq`;
const WIDE_DLT = `dlq.demo.ovw-${RUN}-${"w".repeat(150)}`;
const WIDE_CLASS = `com.example.${"VeryLongPackageName".repeat(5)}.OrderPaymentAuthorizationDeclinedByUpstreamGatewayException`;
const LENGTH_KIND = "rabbitmq.dlq_max_length";
/** A Kafka DLT (the e2e config's pattern dlq.demo.*) never scanned: read by offset, its sample costs it nothing. */
const DLT = `dlq.demo.ovw-${RUN}`;
const kafka = mendKafkajs(
  new Kafka({ clientId: "e2e-overview", brokers: ["127.0.0.1:9092"], logLevel: logLevel.NOTHING }),
);

let conn: amqp.ChannelModel;

const rowOf = (page: Page, connectionId: string, queue: string) =>
  page.locator(`[data-testid="dlq-row"][data-connection-id="${connectionId}"][data-queue="${queue}"]`);

test.beforeAll(async () => {
  conn = await amqp.connect(URL);
  const ch = await conn.createChannel();
  await ch.assertExchange(DLX, "direct", { durable: false, autoDelete: false });
  const dlqs: Array<[string, Record<string, unknown>]> = [
    ...CAPPED.map((q): [string, Record<string, unknown>] => [q, { "x-max-length": 1000 }]),
    [EXPIRING, { "x-expires": 86_400_000 }],
    [WIDE, {}],
  ];
  for (const [dlq, args] of dlqs) {
    await ch.assertQueue(dlq, { durable: true, arguments: args });
    await ch.bindQueue(dlq, DLX, dlq);
    await ch.assertQueue(`${dlq}.source`, {
      durable: true,
      arguments: { "x-dead-letter-exchange": DLX, "x-dead-letter-routing-key": dlq },
    });
  }
  await ch.close();
});

test.afterAll(async () => {
  const ch = await conn.createChannel();
  for (const q of [...CAPPED, EXPIRING, WIDE]) {
    await ch.deleteQueue(q).catch(() => undefined);
    await ch.deleteQueue(`${q}.source`).catch(() => undefined);
  }
  await ch.deleteExchange(DLX).catch(() => undefined);
  await conn.close().catch(() => undefined);
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [DLT, WIDE_DLT] }).catch(() => undefined);
  await admin.disconnect();
});

test("after a scan, the DLQ's row names its largest group's class with its share and says it comes from the scan", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await loadSession(page, "operator");
  await page.goto(`${dlqPath(SCANNED, CONNECTION)}/triage`);
  await scanToDone(page);
  await expect(page.getByTestId("group-row").first()).toBeVisible();
  // What the group page shows as the largest group, and the letters it counts.
  const groups = await page
    .getByTestId("group-row")
    .evaluateAll((rows) =>
      rows.map((r) => ({ cls: r.getAttribute("data-class") ?? "", count: Number(r.getAttribute("data-count")) })),
    );
  const total = groups.reduce((n, g) => n + g.count, 0);
  const top = [...groups].sort((a, b) => b.count - a.count)[0];
  expect(top.cls).not.toBe("");
  expect(top.count).toBeLessThan(total);

  await page.goto("/");
  const cell = rowOf(page, CONNECTION, SCANNED).getByTestId("dlq-top-failure");
  await expect(cell).toHaveAttribute("data-source", "scan");
  await expect(cell.getByTestId("dlq-top-failure-label")).toHaveText(top.cls);
  await expect(cell.getByTestId("dlq-top-failure-share")).toHaveText(`· ${Math.round((top.count / total) * 100)}%`);
  await expect(cell.getByTestId("dlq-top-failure-source")).toHaveText(/^scan · (just now|\d+ s ago)$/);
  await expect(cell).toHaveAttribute("title", new RegExp(`${top.count} of ${total} letters`));
  // It leads to the groups it summarises.
  await cell.getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`/dlqs/${CONNECTION}/${SCANNED.replace(/\./g, "\\.")}/triage$`));
});

test("a Kafka DLT never scanned shows the top failure of its newest letters, from a sample, with its share", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await createTopic(kafka, DLT);
  const producer = kafka.producer();
  await producer.connect();
  // Spring wraps every listener failure; the cause header names what failed (3 of 4 letters).
  const spring = (cause: string) => ({
    "kafka_dlt-exception-fqcn": "org.springframework.kafka.listener.ListenerExecutionFailedException",
    "kafka_dlt-exception-cause-fqcn": cause,
    "kafka_dlt-exception-message": "Listener failed",
    "kafka_dlt-original-topic": "demo.orders",
  });
  await producer.send({
    topic: DLT,
    messages: [
      ...[1, 2, 3].map((i) => ({ value: `{"order":${i}}`, headers: spring("java.lang.NullPointerException") })),
      { value: `{"order":4}`, headers: spring("com.acme.<b>Markup</b>Exception") },
    ],
  });
  await producer.disconnect();

  await loadSession(page, "viewer");
  // The overview starts a sampling round when it is asked and shows it on a later look.
  await expect
    .poll(
      async () => {
        await page.goto(`/?q=${encodeURIComponent(DLT)}`);
        return rowOf(page, "local-kafka", DLT).getByTestId("dlq-top-failure").getAttribute("data-source");
      },
      { timeout: 150_000, intervals: [5000] },
    )
    .toBe("sample");
  const cell = rowOf(page, "local-kafka", DLT).getByTestId("dlq-top-failure");
  await expect(cell.getByTestId("dlq-top-failure-label")).toHaveText("java.lang.NullPointerException");
  await expect(cell.getByTestId("dlq-top-failure-share")).toHaveText("· 75%");
  await expect(cell.getByTestId("dlq-top-failure-source")).toHaveText(/^sample of 4 · /);
  // The wrapper is not what failed.
  await expect(cell).not.toContainText("ListenerExecutionFailedException");
});

test("at 1440x900 the overview fits the screen: no sideways scrolling, details folded under each name", async ({
  page,
}) => {
  test.setTimeout(180_000);
  await createTopic(kafka, WIDE_DLT);
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: WIDE_DLT,
    messages: [1, 2].map((i) => ({
      value: `{"order":${i}}`,
      headers: {
        "kafka_dlt-exception-fqcn": WIDE_CLASS,
        "kafka_dlt-exception-message": `declined ${"x".repeat(300)}`,
        "kafka_dlt-original-topic": `demo.${"o".repeat(150)}`,
      },
    })),
  });
  await producer.disconnect();
  await page.setViewportSize({ width: 1440, height: 900 });
  await loadSession(page, "viewer");
  // The widest rows are there, the DLT's top failure read from its sample.
  await expect
    .poll(
      async () => {
        await page.goto(`/?q=${encodeURIComponent(WIDE_DLT)}`);
        return rowOf(page, "local-kafka", WIDE_DLT).getByTestId("dlq-top-failure").getAttribute("data-source");
      },
      { timeout: 150_000, intervals: [5000] },
    )
    .toBe("sample");
  await page.goto("/?all=1");
  await expect(rowOf(page, CONNECTION, WIDE)).toBeVisible();
  expect(await page.getByTestId("dlq-row").count()).toBeGreaterThan(5);
  const measure = () =>
    page.evaluate(() => {
      const doc = document.scrollingElement!;
      const wrap = document.querySelector('[data-testid="dlq-table"]')!.parentElement!;
      // The cell whose content is widest, to name in the failure: which row pushes the table out.
      let widest = "";
      let most = 0;
      for (const td of document.querySelectorAll('[data-testid="dlq-row"] td')) {
        if (td.scrollWidth > most) {
          most = td.scrollWidth;
          widest = `${td.closest("tr")?.getAttribute("data-queue")}: ${td.textContent?.slice(0, 120)}`;
        }
      }
      // Cells whose content is cut off at their edge (a label's own ellipsis is not a cut).
      const clipped = [...document.querySelectorAll('[data-testid="dlq-row"] td')]
        .filter((td) => td.scrollWidth > td.clientWidth)
        .map((td) => `${td.closest("tr")?.getAttribute("data-queue")}: ${td.textContent?.slice(0, 80)}`);
      return {
        doc: [doc.scrollWidth, doc.clientWidth],
        table: [wrap.scrollWidth, wrap.clientWidth],
        widest,
        clipped,
      };
    });
  const fits = async (what: string) => {
    const widths = await measure();
    expect(widths.doc[0], `${what}: page scroll width (widest cell ${widths.widest})`).toBeLessThanOrEqual(
      widths.doc[1],
    );
    expect(widths.table[0], `${what}: table scroll width (widest cell ${widths.widest})`).toBeLessThanOrEqual(
      widths.table[1],
    );
  };
  await fits("the DLQs as they are");
  expect((await measure()).clipped, "cells whose content is cut off").toEqual([]);
  // Whatever a cell comes to hold (a team's long name, a firing badge, a figure nobody foresaw),
  // the columns hold: a word that cannot break, put in every cell of one row, widens nothing.
  await page
    .getByTestId("dlq-row")
    .first()
    .evaluate((row) => {
      for (const td of row.querySelectorAll("td")) {
        const unbreakable = document.createElement("span");
        unbreakable.style.whiteSpace = "nowrap";
        unbreakable.textContent = "W".repeat(80);
        td.append(unbreakable);
      }
    });
  await fits("a row whose every cell holds an unbreakable word");
  // Connection, type and origins are the line under the name.
  const billing = rowOf(page, CONNECTION, SCANNED);
  await expect(billing.getByTestId("dlq-detail")).toContainText("Local RabbitMQ");
  await expect(billing.getByTestId("dlq-type")).toHaveText(/^rabbitmq \w+$/);
});

test("findings are grouped by kind, critical first; an operator acknowledges a whole kind, a viewer is refused", async ({
  page,
  browser,
}) => {
  test.setTimeout(180_000);
  await loadSession(page, "operator");
  // The sampler finds the three DLQs' faults.
  const db = new pg.Client({ connectionString: DB_URL });
  await db.connect();
  try {
    await expect
      .poll(
        async () =>
          (
            await db.query(
              "SELECT count(*)::int AS n FROM dlq_findings WHERE resolved_at IS NULL AND connection_id = $1 AND queue = ANY($2)",
              [CONNECTION, [...CAPPED, EXPIRING]],
            )
          ).rows[0].n,
        { timeout: 60_000, intervals: [1000] },
      )
      // A length limit on each capped DLQ, the expiry, and nobody owns any of the three.
      .toBeGreaterThanOrEqual(6);

    await page.goto("/findings");
    const groups = page.getByTestId("finding-groups-pending").getByTestId("finding-group");
    await expect(groups.first()).toBeVisible();
    const kinds = await groups.evaluateAll((g) =>
      g.map((x) => ({
        code: x.getAttribute("data-code"),
        severity: x.getAttribute("data-severity"),
        count: Number(x.getAttribute("data-count")),
      })),
    );
    // One group per kind, the worst severity first, however many findings a milder kind has.
    expect(new Set(kinds.map((k) => k.code)).size).toBe(kinds.length);
    const rank = { critical: 3, warning: 2, info: 1 } as Record<string, number>;
    for (let i = 1; i < kinds.length; i++)
      expect(rank[kinds[i - 1].severity!]).toBeGreaterThanOrEqual(rank[kinds[i].severity!]);
    expect(kinds[0].severity).toBe("critical");
    expect(kinds.map((k) => k.code)).toContain("rabbitmq.dlq_expires");
    const noOwner = groups.and(page.locator('[data-code="dlq.no_owner"]'));
    await expect(noOwner).toHaveCount(1);
    expect(Number(await noOwner.getAttribute("data-count"))).toBeGreaterThanOrEqual(3);
    await expect(noOwner.getByTestId("finding-group-why")).toContainText("No team owns this DLQ");

    // The length-limit kind lists both capped DLQs; every finding is one click away.
    const length = groups.and(page.locator(`[data-code="${LENGTH_KIND}"]`));
    for (const q of CAPPED) await expect(length.getByTestId("finding-group-dlqs")).toContainText(q);
    await length.getByTestId("finding-group-each").click();
    await expect(
      length.locator(`[data-testid="finding-row"][data-code="${LENGTH_KIND}"][data-queue="${CAPPED[0]}"]`),
    ).toBeVisible();

    // A viewer sees the kinds but no button, and the server refuses the action called directly.
    const viewer = await browser.newContext();
    const vpage = await viewer.newPage();
    try {
      await loadSession(vpage, "viewer");
      await vpage.goto("/findings");
      await expect(vpage.getByTestId("finding-group").first()).toBeVisible();
      await expect(vpage.getByTestId("finding-ack-all")).toHaveCount(0);
      const res = await callServerAction(vpage.request, "/findings", serverActionId("acknowledgeFindingKindAction"), [
        { code: LENGTH_KIND },
      ]);
      expect(res.text).toContain("forbidden:ops:acknowledge");
      expect(res.text).not.toContain('"ok":true');
    } finally {
      await viewer.close();
    }
    const stillOpen = await db.query(
      "SELECT count(*)::int AS n FROM dlq_findings WHERE code = $1 AND queue = ANY($2) AND acknowledged_at IS NULL AND resolved_at IS NULL",
      [LENGTH_KIND, CAPPED],
    );
    expect(stillOpen.rows[0].n, "the viewer's call acknowledged nothing").toBe(2);

    // The operator acknowledges the whole kind: it leaves the kinds to acknowledge, one audit row says so.
    const since = new Date(Date.now() - 1000).toISOString();
    const count = Number(await length.getAttribute("data-count"));
    await expect(length.getByTestId("finding-ack-all")).toHaveText(`Acknowledge all ${count}`);
    await length.getByTestId("finding-ack-all").click();
    await expect(groups.and(page.locator(`[data-code="${LENGTH_KIND}"]`))).toHaveCount(0);
    const seen = page.getByTestId("findings-seen");
    await seen.locator("xpath=./summary").click();
    await expect(seen.locator(`[data-testid="finding-group"][data-code="${LENGTH_KIND}"]`)).toBeVisible();
    const audit = await db.query(
      "SELECT outcome, target, details, actor_email FROM audit_log WHERE action = 'finding.acknowledge_all' AND outcome = 'success' AND at >= $1",
      [since],
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({
      outcome: "success",
      target: LENGTH_KIND,
      actor_email: "operator@e2e.test",
      details: { code: LENGTH_KIND, count },
    });
    const denied = await db.query(
      "SELECT count(*)::int AS n FROM audit_log WHERE action = 'finding.acknowledge_all' AND outcome = 'denied' AND actor_role = 'viewer' AND target = $1",
      [LENGTH_KIND],
    );
    expect(denied.rows[0].n).toBeGreaterThanOrEqual(1);
  } finally {
    await db.end();
  }
});
