import { test, expect, type Page } from "@playwright/test";
import { loadSession } from "./fixtures";

/**
 * The API reference page (/api-reference): reached from the header and the profile page, it shows
 * every operation of the served OpenAPI document (read here from /api/v1/openapi.json), the
 * authentication and the problem shape, curl lines with a placeholder token, and no CSP violations.
 */
type Doc = {
  paths: Record<string, Record<string, { operationId: string; summary: string }>>;
  components: { schemas: Record<string, unknown> };
};

async function servedDocument(page: Page): Promise<Doc> {
  const res = await page.request.get("/api/v1/openapi.json");
  expect(res.status()).toBe(200);
  return (await res.json()) as Doc;
}

/** Records CSP violations the page sees (DOM event and console), as e2e/security.spec.ts does. */
async function watchCsp(page: Page): Promise<string[]> {
  const seen: string[] = [];
  await page.exposeFunction("__reportApiRefCsp", (v: string) => seen.push(v));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      (window as unknown as { __reportApiRefCsp: (v: string) => void }).__reportApiRefCsp(
        `${e.effectiveDirective} blocked ${e.blockedURI}`,
      );
    });
  });
  page.on("console", (m) => {
    if (/Content.Security.Policy/i.test(m.text())) seen.push(`console: ${m.text()}`);
  });
  return seen;
}

test("a viewer reaches the reference from the header and sees every operation of the served document", async ({
  page,
}) => {
  const violations = await watchCsp(page);
  await loadSession(page, "viewer");
  await page.goto("/");
  await page.getByTestId("nav-api-reference").click();
  await expect(page).toHaveURL(/\/api-reference$/);
  await expect(page.getByRole("heading", { name: "API reference", level: 1 })).toBeVisible();

  const doc = await servedDocument(page);
  const expected = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), ...op })),
  );
  expect(expected.length).toBeGreaterThan(3);
  await expect(page.getByTestId("api-operation")).toHaveCount(expected.length);
  // Every card read in one round trip (not six per operation), then checked here: one card per
  // operation, with its path and method, a heading naming both path and summary, and one curl line
  // for its path. Retried as a whole until the page holds them all.
  await expect(async () => {
    const cards = await page.getByTestId("api-operation").evaluateAll((els) =>
      els.map((e) => ({
        id: e.getAttribute("data-operation-id"),
        path: e.getAttribute("data-path"),
        method: e.getAttribute("data-method"),
        headings: [...e.querySelectorAll("h3")].map((h) => (h.textContent ?? "").replace(/\s+/g, " ")),
        curls: [...e.querySelectorAll('[data-testid="api-curl"]')].map((c) =>
          (c.textContent ?? "").replace(/\s+/g, " "),
        ),
      })),
    );
    for (const op of expected) {
      const mine = cards.filter((c) => c.id === op.operationId);
      expect(mine, op.operationId).toHaveLength(1);
      const [card] = mine;
      expect(card.path, op.operationId).toBe(op.path);
      expect(card.method, op.operationId).toBe(op.method);
      expect(card.headings, op.operationId).toHaveLength(1);
      expect(card.headings[0], op.operationId).toContain(op.path);
      expect(card.headings[0], op.operationId).toContain(op.summary.replace(/\s+/g, " "));
      expect(card.curls, op.operationId).toHaveLength(1);
      expect(card.curls[0], op.operationId).toContain(op.path.replace(/\?.*$/, ""));
    }
  }).toPass({ timeout: 15_000 });

  // Authentication and the one problem shape every error uses.
  await expect(page.getByTestId("api-auth")).toContainText("Authorization: Bearer");
  const problem = page.getByTestId("api-problem");
  for (const field of ["type", "title", "status", "detail", "instance", "code"])
    await expect(problem).toContainText(field);

  // The curl lines name a placeholder, never a token; the page has no field to paste one into.
  const curls = await page.getByTestId("api-curl").allTextContents();
  for (const c of curls) expect(c).not.toMatch(/dlqc_[0-9A-Za-z]{10,}/);
  expect(curls.filter((c) => c.includes("Bearer $DLQ_CONSOLE_TOKEN")).length).toBeGreaterThan(0);
  await expect(page.locator("main input, main textarea")).toHaveCount(0);

  await page.waitForLoadState("networkidle");
  expect(violations).toEqual([]);
});

test("an admin reaches the reference from the profile page, where tokens are made", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await loadSession(page, "admin");
  await page.goto("/");
  // An admin has the most links: at 1280 px the account controls on the right are still on screen (the nav scrolls instead).
  for (const id of ["nav-api-reference", "nav-profile", "sign-out"]) {
    const box = (await page.getByTestId(id).boundingBox())!;
    expect(box.x + box.width, id).toBeLessThanOrEqual(1280);
    await expect(page.getByTestId(id)).toBeInViewport();
  }
  await page.getByTestId("nav-profile").click();
  await expect(page).toHaveURL(/\/profile$/);
  await page.getByTestId("api-reference-link").click();
  await expect(page).toHaveURL(/\/api-reference$/);
  const doc = await servedDocument(page);
  const first = Object.values(Object.values(doc.paths)[0])[0];
  await expect(page.locator(`[data-operation-id="${first.operationId}"]`)).toBeVisible();
  // The table of contents jumps to an operation.
  await page.getByRole("navigation", { name: "Operations" }).getByRole("link", { name: first.summary }).click();
  await expect(page).toHaveURL(new RegExp(`#${first.operationId}$`));
});
