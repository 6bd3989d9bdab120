import { test, expect } from "@playwright/test";
import { shortName, topicPath, type TopicName } from "../lib/brokers/pulsar/client";
import { PulsarKit, dlqOf } from "../lib/brokers/pulsar/test-kit";
import { dlqPath, loadSession } from "./fixtures";
import { awaitInconclusiveVerdict, continueAnywayToEnd, scanToDone, startRedrive } from "./redrive-steps";

/**
 * Pulsar, end to end: the demo DLQ (lib/demo/pulsar.ts, dead-lettered by a real consumer's
 * dead-letter policy) browsed and a letter opened, and a redrive of a DLQ made for this run: an
 * operator scans it, redrives its group (a sample, a short watch; the origin's subscription has no
 * consumer connected, so the verdict is inconclusive with that evidence and the rest goes only by
 * continuing anyway with a reason), and the letters are back on their original topic with the
 * console's markers while the console's subscription on the DLQ has none left.
 */
const CONNECTION = "local-pulsar";
const DEMO = {
  dlq: "public/demo/payments-payments-service-DLQ",
  source: "public/demo/payments",
  subscription: "payments-service",
} as const;
const CLASS = "com.acme.orders.ReservationExpiredException";
const N = 3;

const kit = new PulsarKit();
let run: { source: TopicName; dlq: TopicName };

async function backlog(t: TopicName): Promise<number | null> {
  const s = await kit.admin.get<{ subscriptions?: Record<string, { msgBacklog?: number }> }>(
    `persistent/${topicPath(t)}/stats`,
    "read stats",
  );
  return s?.subscriptions?.["dlq-console"]?.msgBacklog ?? null;
}

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  run = await dlqOf(
    kit,
    Array.from({ length: N }, (_, i) => ({
      body: new TextEncoder().encode(JSON.stringify({ reservationId: `r-${i}`, seats: 2 })),
      headers: { "x-exception-class": CLASS, "x-exception-message": `Reservation r-${i} expired at 10:0${i}` },
      orderingKey: `venue-${i}`,
    })),
  );
});

test.afterAll(() => kit.cleanup());

test("an operator opens the demo Pulsar DLQ and a letter: origin topic and subscription, properties; reading takes nothing", async ({
  page,
}) => {
  await loadSession(page, "operator");
  await page.goto("/");
  const row = page.getByTestId("dlq-row").filter({ hasText: DEMO.dlq });
  await expect(row).toBeVisible();
  await expect(row).toContainText("pulsar");
  await row.getByRole("link", { name: DEMO.dlq }).click();
  await expect(page.getByTestId("dlq-name")).toHaveText(DEMO.dlq);
  const letters = page.getByTestId("letter-row");
  await expect(letters).toHaveCount(4);

  await letters.first().getByRole("link").first().click();
  await expect(page).toHaveURL(/\/letters\/\d+-\d+$/);
  const summary = page.getByTestId("letter-summary");
  await expect(summary).toContainText(DEMO.source);
  await expect(summary).toContainText("java.lang.NumberFormatException");
  await expect(page.getByTestId("property-row").filter({ hasText: "origin subscription" })).toContainText(
    DEMO.subscription,
  );
  await expect(page.getByTestId("property-row").filter({ hasText: "origin message id" })).toBeVisible();
  await expect(page.getByTestId("property-row").filter({ hasText: /^key/ })).toContainText("acct-1");
  await expect(page.getByTestId("header-row").filter({ hasText: "REAL_TOPIC" })).toContainText(
    `persistent://${DEMO.source}`,
  );

  // Reading took nothing: the console's subscription still holds all four.
  const [tenant, namespace, topic] = DEMO.dlq.split("/");
  expect(await backlog({ tenant, namespace, topic })).toBe(4);
});

test("an operator redrives a Pulsar group: a sample, an inconclusive verdict with its evidence, continue anyway, the rest; the letters are back on their topic with markers and gone from the DLQ", async ({
  page,
}) => {
  test.setTimeout(150_000);
  await loadSession(page, "operator");
  await page.goto(`${dlqPath(shortName(run.dlq), CONNECTION)}/triage`);
  await scanToDone(page);
  const group = page.getByTestId("group-row");
  await expect(group).toHaveCount(1);
  await expect(group).toHaveAttribute("data-count", String(N));
  await group.getByTestId("group-redrive").click();
  await expect(page.getByTestId("redrive-scope")).toHaveAttribute("data-count", String(N));
  await expect(page.getByTestId("target-origins")).toContainText(shortName(run.source));
  const { jobId } = await startRedrive(page, {
    count: N,
    fix: "booking-service 3.1 extends holds to 15 min (BOOK-88)",
    sample: 1,
    watchSeconds: 2,
    rate: 20,
  });
  // The origin's subscription exists but no consumer is connected to it: nothing read the copy.
  const source = shortName(run.source);
  await awaitInconclusiveVerdict(page, 1, [
    { target: source, state: "no_reader", text: `No consumer is connected to any subscription on topic "${source}"` },
  ]);
  await continueAnywayToEnd(page, N, {
    reason: "booking-service is redeployed with BOOK-88 after the redrive",
    by: "operator@e2e.test",
  });

  // At the broker: the origin topic holds the three originals and the three redriven copies, each
  // copy with its key, properties and this redrive's markers; the console's subscription holds none.
  await expect.poll(() => backlog(run.dlq)).toBe(0);
  const all = await kit.readAll(run.source);
  const copies = all.filter((m) => m.properties?.["x-dlq-redrive-id"] === jobId);
  expect(copies).toHaveLength(N);
  expect(copies.map((m) => m.key).sort()).toEqual(["venue-0", "venue-1", "venue-2"]);
  for (const c of copies) {
    expect(c.properties?.["x-exception-class"]).toBe(CLASS);
    expect(c.properties?.["REAL_TOPIC"]).toBe(`persistent://${shortName(run.source)}`);
    expect(c.properties?.["x-dlq-redrive-count"]).toBe("1");
  }

  // The DLQ page agrees: no letter left.
  await page.goto(dlqPath(shortName(run.dlq), CONNECTION));
  await expect(page.getByTestId("letter-row")).toHaveCount(0);
});
