import { test, expect } from "@playwright/test";
import { loadSession, dlqPath } from "./fixtures";

// e2e/dlq-console.e2e.config.json names "down-rabbitmq", a broker at a port where nothing listens.

test("a broker that is down is named on the list, its DLQ page explains, and the rest works", async ({ page }) => {
  await loadSession(page, "operator");
  await page.goto("/");
  const banner = page.getByTestId("connection-down").filter({ hasText: "down-rabbitmq" });
  await expect(banner).toBeVisible();
  await expect(banner).toContainText(/cannot be reached/i);
  await expect(page.getByTestId("dlq-row").filter({ hasText: "Local RabbitMQ" }).first()).toBeVisible();

  const res = await page.goto(dlqPath("orders.dlq", "down-rabbitmq"));
  expect(res?.status()).toBeLessThan(500);
  await expect(page.getByTestId("problem")).toContainText(/cannot be reached/i);
  await expect(page.locator("body")).not.toContainText(/at .*\.ts:\d+|ECONNREFUSED|stack/i);
});

test("readiness reports the degraded broker by code only, and stays ready", async ({ request }) => {
  const res = await request.get("/api/ready");
  expect(res.status()).toBe(200);
  const h = await res.json();
  expect(h.status).toBe("degraded");
  expect(h.brokers).toContainEqual({
    connectionId: "down-rabbitmq",
    kind: "rabbitmq",
    ok: false,
    error: "unavailable:broker",
  });
  expect(JSON.stringify(h)).not.toContain("5999");
});
