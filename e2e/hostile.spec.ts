import { test, expect, type Page } from "@playwright/test";
import { loadSession } from "./fixtures";
import {
  HOSTILE,
  HOSTILE_DLQS,
  HOSTILE_EXCEPTION,
  HOSTILE_HEADER_NAME,
  HOSTILE_LETTERS,
  HOSTILE_NAMED_DLQ,
  HOSTILE_SECRET,
  hostileHeader,
  type HostileKey,
} from "@/lib/demo/hostile-corpus";

/**
 * The hostile-content corpus (lib/demo/hostile-corpus.ts, seeded by scripts/seed-demo.ts into one
 * DLQ per broker) on every view that shows it: the DLQ's letter list, each letter's page, the
 * triage groups, a header group-by, and search results. Nothing may run (no dialog, no global set
 * by a script, no element or attribute made from the data, no CSP violation, no request to a URL
 * from the data) and the text must be there literally, character for character.
 */
const ORIGIN = `http://127.0.0.1:${process.env.E2E_PORT ?? 3100}`;
const enc = encodeURIComponent;

interface Watch {
  dialogs: string[];
  csp: string[];
  requests: string[];
}

async function watch(page: Page): Promise<Watch> {
  const w: Watch = { dialogs: [], csp: [], requests: [] };
  page.on("dialog", (d) => {
    w.dialogs.push(d.message());
    void d.dismiss();
  });
  await page.exposeFunction("__reportCspViolation", (v: string) => w.csp.push(v));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      (window as unknown as { __reportCspViolation: (v: string) => void }).__reportCspViolation(
        `${e.effectiveDirective} blocked ${e.blockedURI} on ${location.pathname}`,
      );
    });
  });
  page.on("console", (m) => {
    if (/Content.Security.Policy/i.test(m.text())) w.csp.push(`console: ${m.text()}`);
  });
  // The corpus names 127.0.0.1:9 (CSS) and javascript: URLs; the console itself only talks to its own origin.
  page.on("request", (r) => {
    if (/^https?:/.test(r.url()) && new URL(r.url()).origin !== ORIGIN) w.requests.push(r.url());
  });
  return w;
}

/** Nothing from the corpus ran or became markup on the current page. */
async function expectInert(page: Page, w: Watch, where: string) {
  await page.waitForLoadState("networkidle");
  const found = await page.evaluate(() => ({
    hostileGlobal: (window as unknown as { __hostile?: unknown }).__hostile ?? null,
    polluted: ({} as Record<string, unknown>).hostilePolluted ?? null,
    injected: [
      ...document.querySelectorAll(
        'main script, main style, main iframe, main object, main embed, [onerror], [onload], [onclick], img[src="x"], #hostile-a, #hostile-css, svg circle[r="9"]',
      ),
      ...[...document.querySelectorAll("a[href], [src], [action]")].filter((e) =>
        /^\s*javascript:/i.test(e.getAttribute("href") ?? e.getAttribute("src") ?? e.getAttribute("action") ?? ""),
      ),
    ].map((e) => e.outerHTML.slice(0, 120)),
    // React's flight data carries values inside inline scripts as JSON strings: they must not close the script.
    inlineCloses: [...document.querySelectorAll("script:not([src])")].filter((s) =>
      (s.textContent ?? "").toLowerCase().includes("</script"),
    ).length,
    bodyBackground: getComputedStyle(document.body).backgroundImage,
  }));
  expect(w.dialogs, `${where}: dialogs`).toEqual([]);
  expect(found.hostileGlobal, `${where}: a script from the data ran`).toBeNull();
  expect(found.polluted, `${where}: Object.prototype polluted`).toBeNull();
  expect(found.injected, `${where}: elements made from the data`).toEqual([]);
  expect(found.inlineCloses, `${where}: an inline script closed by the data`).toBe(0);
  expect(found.bodyBackground, `${where}: CSS from the data applied`).not.toContain("hostile");
  expect(w.csp, `${where}: CSP violations`).toEqual([]);
  expect(w.requests, `${where}: requests to URLs from the data`).toEqual([]);
}

/** The exact text of the value cell of the header row named `name` (headers and SQS attributes share the table). */
async function headerValue(page: Page, name: string): Promise<string> {
  const cells = await page
    .getByTestId("header-row")
    .evaluateAll(
      (rows, n) =>
        rows
          .filter((r) => r.getAttribute("data-name") === n)
          .map((r) => r.querySelector(".value-cell")?.textContent ?? ""),
      name,
    );
  expect(cells, `header ${JSON.stringify(name.slice(0, 40))}`).toHaveLength(1);
  return cells[0];
}

async function startScan(page: Page, connectionId: string, queue: string) {
  const res = await page.request.post("/api/triage/scans", {
    headers: { Origin: ORIGIN },
    data: { connectionId, queue },
  });
  expect([200, 202], await res.text()).toContain(res.status());
  const id = ((await res.json()) as { data: { scan: { id: string } } }).data.scan.id;
  await expect
    .poll(
      async () =>
        ((await (await page.request.get(`/api/triage/scans/${id}`)).json()) as { data: { state: string } }).data.state,
      { timeout: 120_000, intervals: [500, 1000] },
    )
    .toBe("succeeded");
}

const brokers = Object.entries(HOSTILE_DLQS) as Array<
  [keyof typeof HOSTILE_DLQS, (typeof HOSTILE_DLQS)[keyof typeof HOSTILE_DLQS]]
>;

for (const [broker, { connectionId, dlq }] of brokers) {
  test(`${broker}: hostile payloads and headers are shown literally and never run`, async ({ page }) => {
    test.setTimeout(180_000);
    const w = await watch(page);
    await loadSession(page, "operator");
    const base = `/dlqs/${enc(connectionId)}/${enc(dlq)}`;

    // The DLQ's letter list: the failure (markup in the exception message) as text.
    await page.goto(base);
    const rows = page.getByTestId("letter-row");
    await expect(rows).toHaveCount(HOSTILE_LETTERS.length);
    const titles = await page
      .getByTestId("letters-table")
      .locator("td[title]")
      .evaluateAll((tds) => tds.map((td) => td.getAttribute("title") ?? ""));
    // The exception column shows it truncated; its title holds the whole text.
    expect(
      titles.filter((t) => t.includes(HOSTILE_EXCEPTION.message)),
      "exception shown in the list",
    ).toHaveLength(HOSTILE_LETTERS.length);
    await expectInert(page, w, `${broker} letter list`);

    // Every letter's page.
    const hrefs = await page.getByTestId("letter-link").evaluateAll((as) => as.map((a) => a.getAttribute("href")!));
    const seen = new Set<string>();
    for (const href of hrefs) {
      await page.goto(href);
      await expect(page.getByTestId("payload-view")).toBeVisible();
      // RabbitMQ: the label is the message id (letter id m-<base64url>); SQS and Kafka carry it in a header.
      const label = broker === "rabbitmq" ? null : await headerValue(page, "x-hostile-letter");
      const letter = HOSTILE_LETTERS.find((l) =>
        label === null
          ? new URL(page.url()).pathname.endsWith(`/letters/m-${Buffer.from(l.label).toString("base64url")}`)
          : l.label === label,
      );
      expect(letter, `which hostile letter is ${href}`).toBeDefined();
      seen.add(letter!.label);
      const where = `${broker} ${letter!.label}`;

      for (const [name, value] of Object.entries(letter!.headers))
        expect(await headerValue(page, name), `${where} ${name}`).toBe(value);
      // Text that holds direction controls or invisible characters is shown as received and flagged.
      for (const [name, value] of Object.entries(letter!.headers)) {
        const flagged = page
          .getByTestId("header-row")
          .and(page.locator(`[data-name="${name}"]`))
          .getByTestId("hidden-chars");
        if (/[\u202E\u200B]/.test(value))
          await expect(flagged, `${where} ${name} flagged`).toHaveText(
            /\u202E/.test(value) ? "direction controls" : "invisible characters",
          );
        else await expect(flagged, `${where} ${name} not flagged`).toHaveCount(0);
      }
      if (broker !== "sqs" && letter!.extraHeaders) {
        for (const [name, value] of Object.entries(letter!.extraHeaders))
          expect(await headerValue(page, name), `${where} header named ${name}`).toBe(value);
      }
      // Masked values (default rules: *token* headers, password fields) are replaced on the server.
      for (const name of Object.keys(letter!.secretHeaders ?? {}))
        expect(await headerValue(page, name), `${where} ${name} masked`).not.toContain(HOSTILE_SECRET);
      const payload = (await page.getByTestId("payload-view").textContent()) ?? "";
      if (letter!.label === "hostile-text") {
        for (const k of Object.keys(HOSTILE) as HostileKey[])
          expect(payload, `${where} payload has ${k}`).toContain(HOSTILE[k]);
        await expect(page.getByTestId("payload-hidden-chars"), `${where} payload flagged`).toHaveText(
          "direction controls",
        );
      }
      if (letter!.label === "hostile-json") {
        expect(payload).toContain('"__proto__"');
        expect(payload).toContain('"constructor"');
        expect(payload).toContain("hostilePolluted");
        expect(payload).toContain("<script>alert('hostile-json')</script>");
        expect(payload, "the password field is masked").not.toContain(HOSTILE_SECRET);
      }
      if (letter!.label === "hostile-svg") expect(payload).toContain(`onload="alert('hostile-svg-body')"`);
      if (letter!.label === "hostile-bytes" && broker !== "sqs") {
        // Not UTF-8: shown as bytes (hex rows, masked byte-wise where rules apply); never decoded into text or markup.
        await expect(page.getByTestId("payload-kind")).toHaveText("binary, 45 bytes");
        expect(payload.replace(/\s+/g, " ")).toMatch(/c3 ?28 ?a0 ?a1 ?ff ?fe/i);
        expect(payload).not.toContain("alert('hostile-bytes')");
      }
      await expectInert(page, w, where);
    }
    expect([...seen].sort()).toEqual(HOSTILE_LETTERS.map((l) => l.label).sort());

    // Triage: the groups (label from the exception message), a header group-by, search results.
    await startScan(page, connectionId, dlq);
    await page.goto(`${base}/triage`);
    const group = page.getByTestId("group-row").filter({ hasText: HOSTILE_EXCEPTION.className });
    await expect(group).toHaveCount(1);
    await expect(group).toHaveAttribute("data-count", String(HOSTILE_LETTERS.length));
    await expect(group).toContainText(HOSTILE_EXCEPTION.message);
    await expectInert(page, w, `${broker} triage groups`);

    await page.goto(`${base}/triage?by=${enc(`header:${hostileHeader("imgOnerror")}`)}`);
    await expect(page.getByTestId("values-table")).toContainText(HOSTILE.imgOnerror);
    await expectInert(page, w, `${broker} header group-by`);

    // A search for markup: the query is echoed as text, the matches show the markup as text.
    const q = "<script>alert(document.cookie)</script>";
    await page.goto(`${base}/triage?q=${enc(q)}`);
    await expect(page.getByTestId("match-count")).toHaveAttribute("data-count", String(HOSTILE_LETTERS.length));
    await expect(page.getByTestId("triage-letter-row")).toHaveCount(HOSTILE_LETTERS.length);
    await expect(page.getByTestId("triage-letter-row").first().locator("td[title]").first()).toHaveAttribute(
      "title",
      new RegExp(HOSTILE_EXCEPTION.message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")),
    );
    await expect(page.getByTestId("filter-q")).toHaveValue(q);
    await expectInert(page, w, `${broker} search results`);
  });
}

test("the hostile header name is shown as text on RabbitMQ and Kafka", async ({ page }) => {
  // Opens every letter of two DLQs, one page load each: on a loaded machine that is over a minute.
  test.slow();
  const w = await watch(page);
  await loadSession(page, "operator");
  for (const broker of ["rabbitmq", "kafka"] as const) {
    const { connectionId, dlq } = HOSTILE_DLQS[broker];
    await page.goto(`/dlqs/${enc(connectionId)}/${enc(dlq)}`);
    const hrefs = await page.getByTestId("letter-link").evaluateAll((as) => as.map((a) => a.getAttribute("href")!));
    let found = 0;
    for (const href of hrefs) {
      await page.goto(href);
      await expect(page.getByTestId("payload-view")).toBeVisible();
      const names = await page
        .getByTestId("header-row")
        .evaluateAll((rows) => rows.map((r) => r.querySelector("td")?.textContent ?? ""));
      if (names.includes(HOSTILE_HEADER_NAME)) found++;
      await expectInert(page, w, `${broker} ${href}`);
    }
    expect(found, broker).toBe(1);
  }
});

test("the checks above can fail: markup put into the page is caught", async ({ page }) => {
  const w = await watch(page);
  await loadSession(page, "operator");
  const { connectionId, dlq } = HOSTILE_DLQS.rabbitmq;
  await page.goto(`/dlqs/${enc(connectionId)}/${enc(dlq)}`);
  await expect(page.getByTestId("letter-row").first()).toBeVisible();
  // What a rendering bug (dangerouslySetInnerHTML of a header) would do.
  await page.evaluate(
    (html) => document.querySelector("main")!.insertAdjacentHTML("beforeend", html),
    HOSTILE.imgOnerror,
  );
  let caught: unknown = null;
  try {
    await expectInert(page, w, "after an injection");
  } catch (e) {
    caught = e;
  }
  expect(String(caught)).toMatch(/elements made from the data|CSP violations/);
});

/** label → letter page, for one broker's hostile DLQ (RabbitMQ: from the message id; SQS, Kafka: the x-hostile-letter header). */
async function hostileLetterPages(page: Page, broker: keyof typeof HOSTILE_DLQS): Promise<Map<string, string>> {
  const { connectionId, dlq } = HOSTILE_DLQS[broker];
  await page.goto(`/dlqs/${enc(connectionId)}/${enc(dlq)}`);
  await expect(page.getByTestId("letter-row")).toHaveCount(HOSTILE_LETTERS.length);
  const hrefs = await page.getByTestId("letter-link").evaluateAll((as) => as.map((a) => a.getAttribute("href")!));
  const out = new Map<string, string>();
  for (const href of hrefs) {
    if (broker === "rabbitmq") {
      const l = HOSTILE_LETTERS.find((x) => href.endsWith(`/letters/m-${Buffer.from(x.label).toString("base64url")}`));
      if (l) out.set(l.label, href);
      continue;
    }
    await page.goto(href);
    await expect(page.getByTestId("payload")).toBeVisible();
    out.set(await headerValue(page, "x-hostile-letter"), href);
  }
  return out;
}

// The unmasked view is a client component fed by a server action: a second rendering path.
for (const broker of Object.keys(HOSTILE_DLQS) as Array<keyof typeof HOSTILE_DLQS>) {
  test(`${broker}: an admin's unmasked reveal shows the corpus literally and runs nothing`, async ({ page }) => {
    test.setTimeout(180_000);
    const w = await watch(page);
    await loadSession(page, "admin");
    const pages = await hostileLetterPages(page, broker);
    // The letters with masked values (a reveal is offered only where something was masked).
    for (const label of ["hostile-json", "hostile-headers"] as const) {
      await page.goto(pages.get(label)!);
      // A reveal is offered only where something was masked: missing means the DLQ holds an older seed.
      await expect(
        page.getByTestId("reveal-open"),
        `${broker} ${label}: no reveal offered (re-seed: npm run seed:demo -- --only=hostile)`,
      ).toBeVisible({ timeout: 20_000 });
      await page.getByTestId("reveal-open").click();
      await page.getByTestId("reveal-reason").fill("Checking how hostile content is rendered");
      await page.getByTestId("reveal-submit").click();
      const revealed = page.getByTestId("revealed-payload");
      await expect(revealed).toBeVisible();
      const text = (await revealed.textContent()) ?? "";
      if (label === "hostile-json") {
        expect(text).toContain('"__proto__"');
        expect(text, "the password field, unmasked").toContain(HOSTILE_SECRET);
      }
      // The reveal shows what was masked only: the exception message, shown unmasked already, is not repeated.
      await expect(page.getByTestId("revealed-exception")).toHaveCount(0);
      const letter = HOSTILE_LETTERS.find((l) => l.label === label)!;
      const revealedHeaders = await page
        .getByTestId("revealed-header-row")
        .evaluateAll((rows) =>
          Object.fromEntries(
            rows.map((r) => [r.getAttribute("data-name") ?? "", r.querySelector(".value-cell")?.textContent ?? ""]),
          ),
        );
      for (const [name, value] of Object.entries(letter.secretHeaders ?? {}))
        expect(revealedHeaders[name], `${broker} ${label} revealed ${name}`).toBe(value);
      for (const name of Object.keys(letter.headers))
        expect(revealedHeaders[name], `${broker} ${label} ${name} was not masked: not in the reveal`).toBeUndefined();
      await expectInert(page, w, `${broker} ${label} revealed`);
    }
  });
}

test("a RabbitMQ DLQ whose name is markup is listed, opened and read as text", async ({ page }) => {
  test.setTimeout(120_000);
  const w = await watch(page);
  await loadSession(page, "operator");
  await page.goto("/");
  const row = page
    .getByTestId("dlq-row")
    .filter({ has: page.getByRole("link", { name: HOSTILE_NAMED_DLQ.dlq, exact: true }) });
  await expect(row).toHaveCount(1);
  await expectInert(page, w, "DLQ list");
  await row.getByRole("link", { name: HOSTILE_NAMED_DLQ.dlq, exact: true }).click();
  await expect(page.getByTestId("letter-row")).toHaveCount(1);
  expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(
    `/dlqs/${HOSTILE_NAMED_DLQ.connectionId}/${HOSTILE_NAMED_DLQ.dlq}`,
  );
  await expect(page.getByText(HOSTILE_NAMED_DLQ.dlq, { exact: true }).first()).toBeVisible();
  await expectInert(page, w, "DLQ page");
  await page.getByTestId("letter-link").first().click();
  await expect(page.getByTestId("payload-view")).toContainText("a letter in a DLQ whose name is markup");
  await expectInert(page, w, "letter page");
  await page.goto(`/dlqs/${enc(HOSTILE_NAMED_DLQ.connectionId)}/${enc(HOSTILE_NAMED_DLQ.dlq)}/triage`);
  await expect(page.getByText(HOSTILE_NAMED_DLQ.dlq, { exact: true }).first()).toBeVisible();
  await expectInert(page, w, "triage page");
});
