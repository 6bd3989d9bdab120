/**
 * Page speed in Chromium: navigation to idle for the console's main pages, against a static page
 * of the same app in the same run, at the demo's size and then with 1,000 more DLQs. Its smoke (one
 * round, 20 more DLQs) runs in CI after the e2e tier's build (scripts/test.sh, stage bench-pages).
 *
 * For each page, in Debian's Chromium (playwright-core, /usr/bin/chromium), signed in as an admin:
 * - first visit: the first load of the page after the console started (server code and caches cold);
 * - then BENCH_RUNS rounds (default 5) of one more load of every page, whose median is reported.
 * Per load, from the navigation's start:
 * - network idle: when the last request of the page's own load ended, with none other for 500 ms
 *   after it (Playwright's "networkidle" quiet window, not counted);
 * - first interactive: the later of DOMContentLoaded (React has hydrated the server's HTML: Next
 *   runs its hydration in the deferred scripts before that event) and the end of the last long
 *   task (over 50 ms on the main thread) before network idle: the first moment the page has
 *   answered its first paint, its code and its data, and a click or a key is handled at once.
 * Where the time went, per load: "document" is when the HTML's last byte arrived (the server's
 * part, streamed sections included), "busy" the main thread's time in long tasks before idle (the
 * browser's part). Ratios are each page's median to the static page's median. The static page is the app's 404
 * page: every route here renders on demand (the layout reads the session), and the 404 page is the
 * one with nothing of its own to read: the floor every page stands on.
 *
 * The console is started here (`next start` from the existing production build, `npm run build`
 * first) on BENCH_PORT (default 3299) with its own database and an admin user, against the real
 * brokers (the demo letters: `npm run seed:demo`) with e2e/dlq-console.e2e.config.json's
 * connections. The 1,000 DLQs are real RabbitMQ queues in a vhost of their own (a source queue
 * dead-lettering through a fanout exchange into 1,000 queues: each is a DLQ the overview lists),
 * so no other console on this broker sees them; the vhost is deleted at the end.
 *   npm run bench:page-speed        (BENCH_RUNS, BENCH_PORT, BENCH_DLQS=1000, BENCH_PAGES, BENCH_SIZES;
 *                                    smoke: 1 run, 20 DLQs, and with them only the overview and findings)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import amqp from "amqplib";
import { chromium, type Browser, type Page } from "playwright-core";
import { applyMigrations } from "../scripts/lib/migrations";
import { createTestDatabase } from "../scripts/lib/test-database";
import { report, SMOKE, size } from "./report";

const RUNS = size("BENCH_RUNS", 5, 1);
const PORT = Number(process.env.BENCH_PORT ?? 3299);
const DLQS = size("BENCH_DLQS", 1000, 20);
/** Only these pages (comma-separated names as printed), beside the static one; all by default. */
const ONLY = (process.env.BENCH_PAGES ?? "")
  .split(",")
  .map((n) => n.trim())
  .filter(Boolean);
/** "many" measures only the run with the extra DLQs, "demo" only the demo's size; both by default. */
const SIZES = process.env.BENCH_SIZES ?? "demo,many";
const BASE = `http://127.0.0.1:${PORT}`;
const MGMT = "http://127.0.0.1:15672";
const MGMT_AUTH = `Basic ${Buffer.from("guest:guest").toString("base64")}`;
const QUIET_MS = 500;
const ADMIN = { email: `bench-${randomUUID().slice(0, 8)}@pages.test`, password: "bench-only-password-1" };
const DEMO_DLQ = "/dlqs/local-rabbitmq/demo.orders.dlq";

async function mgmt(method: string, p: string, body?: unknown): Promise<void> {
  const res = await fetch(`${MGMT}/api${p}`, {
    method,
    headers: { authorization: MGMT_AUTH, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok && res.status !== 404) throw new Error(`management ${method} ${p}: ${res.status} ${await res.text()}`);
}

/** A vhost with `n` DLQs: one source queue dead-lettering through a fanout exchange bound to each. */
async function manyDlqs(vhost: string, n: number): Promise<void> {
  await mgmt("PUT", `/vhosts/${encodeURIComponent(vhost)}`, {});
  await mgmt("PUT", `/permissions/${encodeURIComponent(vhost)}/guest`, { configure: ".*", write: ".*", read: ".*" });
  const conn = await amqp.connect(`amqp://guest:guest@127.0.0.1:5672/${encodeURIComponent(vhost)}`);
  const ch = await conn.createChannel();
  await ch.assertExchange("bench.dlx", "fanout", { durable: true });
  await ch.assertQueue("bench.source", { durable: true, arguments: { "x-dead-letter-exchange": "bench.dlx" } });
  for (let i = 0; i < n; i++) {
    const q = `bench.dlq.${String(i).padStart(4, "0")}`;
    await ch.assertQueue(q, { durable: true });
    await ch.bindQueue(q, "bench.dlx", "");
  }
  await ch.close();
  await conn.close();
}

async function startConsole(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["node_modules/next/dist/bin/next", "start", "--hostname", "127.0.0.1", "--port", String(PORT)],
    {
      env: { ...process.env, ...env, NEXTAUTH_URL: BASE, NEXT_TELEMETRY_DISABLED: "1", NEXT_MANUAL_SIG_HANDLE: "true" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let err = "";
  child.stderr?.on("data", (d) => {
    err = (err + String(d)).slice(-4000);
  });
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`the console exited: ${err}`);
    const ok = await fetch(`${BASE}/api/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the console did not answer /api/ready: ${err}`);
}

async function stopConsole(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (child.exitCode === null) child.kill("SIGKILL");
}

interface Load {
  idle: number;
  interactive: number;
  /** When the document's last byte arrived: the server's part, streamed sections included. */
  document: number;
  /** Main-thread time in long tasks before idle: the browser's part (parsing, hydration, renders). */
  busy: number;
  /** The document's size as served (decoded), in bytes: the HTML and the RSC payload inlined in it. */
  bytes: number;
  requests: number;
}

/** One navigation, measured as the header says. */
async function load(page: Page, url: string): Promise<Load> {
  const open = new Set<object>();
  let lastEnd = 0;
  let requests = 0;
  const t0 = Date.now();
  const onReq = (r: object) => {
    open.add(r);
    requests++;
  };
  const onEnd = (r: object) => {
    if (open.delete(r)) lastEnd = Date.now();
  };
  page.on("request", onReq);
  page.on("requestfinished", onEnd);
  page.on("requestfailed", onEnd);
  try {
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: 60_000 });
    for (;;) {
      await new Promise((r) => setTimeout(r, 50));
      if (open.size === 0 && Date.now() - Math.max(lastEnd, t0) >= QUIET_MS) break;
      if (Date.now() - t0 > 60_000) throw new Error(`${url}: the network never went idle`);
    }
  } finally {
    page.off("request", onReq);
    page.off("requestfinished", onEnd);
    page.off("requestfailed", onEnd);
  }
  const idleAt = Math.max(lastEnd, t0);
  const timing = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
    const tasks = (
      (window as unknown as { __benchLongTasks?: Array<[number, number]> }).__benchLongTasks ?? []
    ).slice();
    return {
      origin: performance.timeOrigin,
      dcl: nav?.domContentLoadedEventEnd ?? 0,
      responseEnd: nav?.responseEnd ?? 0,
      bytes: nav?.decodedBodySize ?? 0,
      tasks,
    };
  });
  // Page-relative times (from the navigation's start) against the wall clock of this process.
  const navStart = timing.origin;
  const idle = idleAt - navStart;
  const before = timing.tasks.filter(([start]) => start <= idle);
  const lastTask = before.reduce((m, [s, d]) => Math.max(m, s + d), 0);
  const busy = before.reduce((sum, [, d]) => sum + d, 0);
  return {
    idle,
    interactive: Math.max(timing.dcl, lastTask),
    document: timing.responseEnd,
    busy,
    bytes: timing.bytes,
    requests,
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

interface PageSpec {
  name: string;
  url: (page: Page) => Promise<string>;
}

async function measure(browser: Browser, all: PageSpec[], label: string, only = ONLY): Promise<void> {
  const pages = all.filter((p, i) => i === 0 || only.length === 0 || only.includes(p.name));
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(() => {
    const list: Array<[number, number]> = [];
    (window as unknown as { __benchLongTasks: typeof list }).__benchLongTasks = list;
    try {
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) list.push([e.startTime, e.duration]);
      }).observe({ type: "longtask", buffered: true });
    } catch {
      // No long-task timing in this browser: first interactive is DOMContentLoaded.
    }
  });
  const page = await context.newPage();
  await page.goto(`${BASE}/signin`);
  await page.getByLabel("Email").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("sign-out").waitFor({ timeout: 60_000 });

  // First visits in order, then rounds of every page once: a machine that slows down or speeds
  // up during the run weighs on every page alike, the static one included.
  const results: Array<{ name: string; url: string; first: Load; runs: Load[] }> = [];
  for (const spec of pages) {
    const url = await spec.url(page);
    results.push({ name: spec.name, url, first: await load(page, url), runs: [] });
  }
  for (let i = 0; i < RUNS; i++) for (const r of results) r.runs.push(await load(page, r.url));
  await context.close();

  const base = results[0];
  const baseIdle = median(base.runs.map((r) => r.idle));
  const baseInteractive = median(base.runs.map((r) => r.interactive));
  const ms = (n: number) => `${Math.round(n)} ms`.padStart(8);
  console.log(`\n${label}: median of ${RUNS} loads after a first visit; ratios to the static page's medians`);
  console.log(
    `${"page".padEnd(18)} ${"first idle".padStart(10)} ${"idle".padStart(8)} ${"× static".padStart(8)} ${"interact".padStart(8)} ${"× static".padStart(8)} ${"document".padStart(8)} ${"busy".padStart(8)} ${"HTML kB".padStart(8)} ${"requests".padStart(8)}`,
  );
  for (const r of results) {
    const idle = median(r.runs.map((x) => x.idle));
    const inter = median(r.runs.map((x) => x.interactive));
    console.log(
      `${r.name.padEnd(18)} ${ms(r.first.idle).padStart(10)} ${ms(idle)} ${(idle / baseIdle).toFixed(2).padStart(8)} ${ms(inter)} ${(inter / baseInteractive).toFixed(2).padStart(8)} ${ms(median(r.runs.map((x) => x.document)))} ${ms(median(r.runs.map((x) => x.busy)))} ${String(Math.round(median(r.runs.map((x) => x.bytes)) / 1024)).padStart(8)} ${String(median(r.runs.map((x) => x.requests))).padStart(8)}`,
    );
    if (r !== base)
      report({
        operation: `page ${r.name}, ${label}, navigation to network idle`,
        rate: { value: idle, unit: "ms" },
        anchor: { name: "static page", value: baseIdle, unit: "ms" },
        note: `first interactive ${Math.round(inter)} ms, ${(inter / baseInteractive).toFixed(2)}x the static page's`,
      });
  }
}

/** The first link on `from` matching `selector`, resolved to an absolute URL (a letter, a redrive). */
function firstLink(from: string, selector: string): (page: Page) => Promise<string> {
  return async (page) => {
    await page.goto(`${BASE}${from}`, { waitUntil: "domcontentloaded" });
    const href = await page.locator(selector).first().getAttribute("href", { timeout: 30_000 });
    if (!href) throw new Error(`no link ${selector} on ${from}`);
    return new URL(href, BASE).toString();
  };
}

const at = (p: string) => async () => `${BASE}${p}`;

const PAGES: PageSpec[] = [
  // The baseline: no route of this app is prerendered (the root layout reads the session), so the
  // static page is the app's 404 page: the same layout, CSS and scripts, and no data of its own.
  { name: "static (404 page)", url: at("/_not-found") },
  { name: "overview", url: at("/") },
  { name: "DLQ letters", url: at(DEMO_DLQ) },
  { name: "letter", url: firstLink(DEMO_DLQ, "[data-testid=letter-row] a") },
  { name: "triage", url: at(`${DEMO_DLQ}/triage`) },
  { name: "findings", url: at("/findings") },
  { name: "audit", url: at("/audit") },
  { name: "redrive job", url: async () => `${BASE}${redriveJob}` },
  { name: "archive", url: at("/archive") },
];

/**
 * What the pages show at the demo's size: the demo DLQ scanned into the triage index (by the
 * console's own worker, a non-destructive read), and a redrive of its letters planned and paused
 * before it moved any (its page, ledger included; nothing leaves the demo DLQ).
 */
async function demoData(ownerUrl: string): Promise<void> {
  process.env.DATABASE_URL = ownerUrl;
  const { getDb, closeDb } = await import("../lib/db");
  const { jobStore } = await import("../lib/jobs/store");
  const { populateLedger } = await import("../lib/redrive/ledger");
  const db = getDb();
  const scan = await jobStore().enqueue({
    kind: "scan",
    connectionId: "local-rabbitmq",
    queue: "demo.orders.dlq",
    params: { acceptRisk: true },
  });
  for (let i = 0; ; i++) {
    const j = await jobStore().get(scan.id);
    if (j?.state === "succeeded") break;
    if (j?.state === "failed" || i > 600) throw new Error(`the demo scan did not succeed: ${j?.state} ${j?.error}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const admin = await db.user.findUniqueOrThrow({ where: { email: ADMIN.email } });
  const job = await db.job.create({
    data: {
      kind: "redrive",
      connectionId: "local-rabbitmq",
      queue: "demo.orders.dlq",
      state: "paused",
      createdBy: admin.id,
    },
  });
  const total = await populateLedger(db, job.id, { connectionId: "local-rabbitmq", queue: "demo.orders.dlq" });
  await db.redrivePlan.create({
    data: {
      jobId: job.id,
      connectionId: "local-rabbitmq",
      queue: "demo.orders.dlq",
      selection: { kind: "filter", filter: {} },
      target: { kind: "origin" },
      fix: "bench: page speed",
      sampleSize: 1,
      watchSeconds: 60,
      rate: 1,
      redriveLimit: 3,
      parking: { kind: "mark" },
      breakerThreshold: 0.1,
      breakerWindow: 200,
      breakerMinLetters: 20,
      total,
      stage: "sample",
      createdById: admin.id,
      createdByEmail: admin.email,
      createdByRole: "admin",
    },
  });
  redriveJob = `/dlqs/local-rabbitmq/demo.orders.dlq/redrive/${job.id}`;
  await closeDb();
}
let redriveJob = "";

async function main() {
  if (!existsSync(".next/BUILD_ID")) throw new Error("no production build: run `npm run build` first");
  const db = await createTestDatabase("dlq_bench_pages");
  await applyMigrations({ databaseUrl: db.url });
  process.env.DATABASE_URL = db.url;
  const { createUser } = await import("../lib/auth/users");
  await createUser({ ...ADMIN, role: "admin" });
  const { closeDb } = await import("../lib/db");
  await closeDb();

  const vhost = `dlq-bench-${randomUUID().slice(0, 8)}`;
  const demoConfig = JSON.parse(readFileSync("e2e/dlq-console.e2e.config.json", "utf8")) as {
    connections: Array<Record<string, unknown>>;
  };
  const demoFile = path.join(tmpdir(), `${vhost}-demo.json`);
  const manyFile = path.join(tmpdir(), `${vhost}-many.json`);
  writeFileSync(demoFile, JSON.stringify(demoConfig));
  writeFileSync(
    manyFile,
    JSON.stringify({
      ...demoConfig,
      connections: [
        ...demoConfig.connections,
        {
          kind: "rabbitmq",
          id: "bench-many",
          name: `${DLQS} DLQs`,
          url: `amqp://127.0.0.1:5672/${encodeURIComponent(vhost)}`,
          usernameEnv: "RABBITMQ_USERNAME",
          passwordEnv: "RABBITMQ_PASSWORD",
          management: { url: MGMT, usernameEnv: "RABBITMQ_USERNAME", passwordEnv: "RABBITMQ_PASSWORD" },
          discover: true,
        },
      ],
    }),
  );
  const env = {
    DATABASE_URL: db.appUrl,
    NEXTAUTH_SECRET: "bench-secret-not-for-production-0123456789abcdef",
    RABBITMQ_USERNAME: process.env.RABBITMQ_USERNAME ?? "guest",
    RABBITMQ_PASSWORD: process.env.RABBITMQ_PASSWORD ?? "guest",
    DLQ_TRUSTED_PROXIES: "127.0.0.1, ::1",
  };
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--no-first-run",
    ],
  });
  let child: ChildProcess | null = null;
  try {
    child = await startConsole({ ...env, DLQ_CONSOLE_CONFIG: demoFile });
    await demoData(db.url);
    if (SIZES.includes("demo")) await measure(browser, PAGES, "demo size");
    await stopConsole(child);
    child = null;
    if (!SIZES.includes("many")) return;
    const t0 = performance.now();
    await manyDlqs(vhost, DLQS);
    console.log(`\n(${DLQS} DLQs made in vhost ${vhost} in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    child = await startConsole({ ...env, DLQ_CONSOLE_CONFIG: manyFile });
    // The smoke loads every page at the demo's size; with more DLQs, the pages that list them.
    await measure(
      browser,
      PAGES,
      `demo size + ${DLQS} DLQs`,
      SMOKE && ONLY.length === 0 ? ["overview", "findings"] : ONLY,
    );
  } finally {
    if (child) await stopConsole(child);
    await browser.close();
    await mgmt("DELETE", `/vhosts/${encodeURIComponent(vhost)}`).catch(() => undefined);
    await db.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
