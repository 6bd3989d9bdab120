/**
 * Triage scan throughput against the bare client read of the same DLQ, in one run: 50,000 ~1 KB
 * letters with exception headers in a RabbitMQ queue; (1) bare amqplib consume-without-ack,
 * (2) RabbitMqAdapter.stream(), (3) the scan job (grouping, classification, encryption, batched
 * upserts into a fresh Postgres database, reconciliation and group summary), (4) the bare read
 * again, since load drifts on a shared machine. Prints per-phase peak RSS with the heap and
 * off-heap sizes at that moment, the load average after each phase, and per phase the CPU time per
 * letter of this process, of every postgres process and of every RabbitMQ (beam.smp) process on the
 * machine (from /proc: the services are shared, so others' work shows up too).
 *
 * The scan runs in a child process of its own (this file again, BENCH_SCAN_CHILD=1): its peak
 * RSS, heap and off-heap sizes and its Node CPU are those of a process that loaded the scan's
 * modules and ran one scan, not of this harness, which also seeded the queue, ran the migrations'
 * wasm engine and read the queue bare (before 2026-12-05 they shared one process, and the scan's
 * peak RSS included all of that). Postgres and RabbitMQ CPU are read from here, as before.
 *   npm run bench:triage-scan          (BENCH_COUNT to change the count; smoke 2,000)
 *   BENCH_SCAN_ONLY=1                  seed and scan only (no bare reads, stream or search fill):
 *                                      for the memory of large scans (BENCH_COUNT=1000000)
 *   BENCH_QUEUE=name BENCH_KEEP_QUEUE=1 a queue of your own, seeded only when it does not hold
 *                                      BENCH_COUNT letters already, and kept at the end: repeated
 *                                      large runs skip the seeding (delete it yourself afterwards)
 *   BENCH_IDLE_MS=10000                the scan's reader waits this long for a letter before it ends
 *                                      the read short (default the adapter's 1 s)
 *   BENCH_LIVE_HEAP=1                  the child also forces a full gc every 5 s and reports the
 *                                      largest live heap it saw (what the scan retains)
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { availableParallelism, loadavg } from "node:os";
import path from "node:path";
import amqp from "amqplib";
import { RabbitMqAdapter } from "../lib/brokers/rabbitmq/adapter";
import { AMQP_URL, testConfig } from "../lib/brokers/rabbitmq/test-kit";
import { applyMigrations } from "../scripts/lib/migrations";
import { createTestDatabase } from "../scripts/lib/test-database";
import { cpuNow, cpuScope, cpuSince, type Cpu } from "./cpu";
import { report, size } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

const COUNT = size("BENCH_COUNT", 50_000, 2_000);
/** The machine's RabbitMQ, or another local node (DLQ_TEST_AMQP_PORT, see test-kit), the same one the adapter reads. */
const AMQP = AMQP_URL;
/** Unique per run: engineers share the broker, and two benches on one queue would steal each other's letters. */
const QUEUE = process.env.BENCH_QUEUE ?? `bench.triage.dlq.${process.pid}`;
const CONNECTION = "bench-rabbitmq";
const SCAN_ONLY = process.env.BENCH_SCAN_ONLY === "1";
const KEEP_QUEUE = process.env.BENCH_KEEP_QUEUE === "1" && process.env.BENCH_QUEUE !== undefined;

/** Memory at one moment: resident set, V8 heap in use, off-heap (Buffers and other external memory). */
type Mem = { rss: number; heapUsed: number; external: number; arrayBuffers: number };
const noMem = (): Mem => ({ rss: 0, heapUsed: 0, external: 0, arrayBuffers: 0 });
const memNow = (): Mem => {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
};
/** What the scan's own process reports to the harness (one JSON line on stdout). */
interface ChildResult {
  jobId: string;
  /** Loaded (the scan's modules, Prisma client, adapter) and connected to Postgres, after a gc: the process before the scan. */
  before: Mem;
  /** At the highest RSS sampled during the scan (every 50 ms). */
  peak: Mem;
  /** The largest of each figure sampled during the scan (not all at one moment). */
  max: Mem;
  /** Largest heap in use right after a forced full gc (BENCH_LIVE_HEAP=1), else null. */
  liveHeap: number | null;
  /** RSS and heap used every 2 s during the scan: [seconds, rss, heapUsed]. */
  timeline: Array<[number, number, number]>;
  cpu: { node: number; gc: number };
  wall: number;
}
const RESULT = "BENCH_SCAN_CHILD_RESULT ";

const CLASSES = [
  ["java.net.SocketTimeoutException", (i: number) => `Read timed out after ${3000 + (i % 7)} ms calling order ${i}`],
  ["com.acme.ValidationException", (_i: number) => `Field 'email' is invalid for customer ${randomUUID()}`],
  [
    "java.lang.NullPointerException",
    (i: number) => `Cannot invoke "String.length()" because "name" is null at record ${i}`,
  ],
  [
    "org.postgresql.util.PSQLException",
    (i: number) =>
      `ERROR: duplicate key value violates unique constraint "orders_pkey" Detail: Key (id)=(${i}) already exists.`,
  ],
] as const;

async function seed() {
  const conn = await amqp.connect(AMQP);
  const ch = await conn.createConfirmChannel();
  if (KEEP_QUEUE) {
    const q = await ch.assertQueue(QUEUE, { durable: true });
    if (q.messageCount === COUNT) {
      console.log(`${QUEUE} holds ${COUNT} letters already: not seeded again`);
      await conn.close();
      return;
    }
  }
  await ch.deleteQueue(QUEUE);
  await ch.assertQueue(QUEUE, { durable: true });
  const body = Buffer.alloc(1024, "x");
  for (let i = 0; i < COUNT; i += 1000) {
    for (let j = i; j < Math.min(COUNT, i + 1000); j++) {
      const [cls, msg] = CLASSES[j % CLASSES.length];
      ch.sendToQueue(QUEUE, body, {
        persistent: true,
        messageId: `bench-${j}`,
        headers: {
          "x-exception-class": cls,
          "x-exception-message": msg(j),
          "x-exception-stacktrace": `${cls}: ${msg(j)}\n\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:42)\n\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1662)`,
          "x-app-version": "orders-2.3.1",
        },
      });
    }
    await ch.waitForConfirms();
  }
  await conn.close();
}

/**
 * The bare client read: consume-without-ack in windows of at most WINDOW letters (prefetch W, take
 * W, cancel, next consumer), as the adapter's reader does, so the broker never pushes the whole
 * queue at once and memory stays bounded (prefetch 0 buffered every letter: 619 MB peak RSS).
 */
const WINDOW = 5000;
async function bare(): Promise<number> {
  const conn = await amqp.connect(AMQP);
  const ch = await conn.createChannel();
  const t0 = performance.now();
  let n = 0;
  while (n < COUNT) {
    const want = Math.min(WINDOW, COUNT - n);
    await ch.prefetch(want, false);
    let got = 0;
    let done!: () => void;
    const windowDone = new Promise<void>((resolve) => (done = resolve));
    const ok = await ch.consume(QUEUE, (m) => {
      if (m && ++got === want) done();
    });
    await windowDone;
    await ch.cancel(ok.consumerTag);
    n += got;
  }
  const s = (performance.now() - t0) / 1000;
  await ch.close();
  await conn.close();
  return n / s;
}

async function adapterRead(): Promise<number> {
  const adapter = new RabbitMqAdapter(testConfig({ dlqs: [{ name: QUEUE }], discover: false }), {
    allManagedHeaders: MANAGED_HEADERS,
  });
  const t0 = performance.now();
  let n = 0;
  for await (const _ of adapter.stream(QUEUE)) n++;
  const s = (performance.now() - t0) / 1000;
  await adapter.close();
  return n / s;
}

async function main() {
  const db = await createTestDatabase("dlq_bench_scan");
  process.env.DATABASE_URL = db.url;
  process.env.DLQ_INDEX_KEY ??= Buffer.alloc(32, 7).toString("base64");
  await applyMigrations({ databaseUrl: db.url });
  const { jobStore } = await import("../lib/jobs/store");
  const { closeDb, getDb } = await import("../lib/db");
  // Peak RSS and, at that moment, the V8 heap and off-heap buffers: what holds the memory.
  let peak: Mem = noMem();
  const sample = () => {
    const m = memNow();
    if (m.rss > peak.rss) peak = m;
  };
  const sampler = setInterval(sample, 50);
  try {
    console.log(`seeding ${COUNT} letters…`);
    const s0 = performance.now();
    await seed();
    console.log(`seeded in ${((performance.now() - s0) / 1000).toFixed(0)} s`);
    const peaks: Record<string, Mem> = {};
    const loads: Record<string, string> = {};
    const cpus: Record<string, Cpu & { wall: number }> = {};
    const phase = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      globalThis.gc?.();
      peak = noMem();
      sample();
      const c0 = cpuNow();
      const w0 = performance.now();
      const r = await fn();
      cpus[name] = { ...(await cpuSince(c0)), wall: (performance.now() - w0) / 1000 };
      sample();
      peaks[name] = peak;
      loads[name] = loadavg()[0].toFixed(1);
      return r;
    };
    const bareBefore = SCAN_ONLY ? 0 : await phase("bare", bare);
    const streamRate = SCAN_ONLY ? 0 : await phase("stream", adapterRead);
    const queued = await jobStore().enqueue({ kind: "scan", connectionId: CONNECTION, queue: QUEUE });
    // The scan in its own process: Postgres and RabbitMQ CPU measured here, its Node CPU and memory there.
    const child = await phase("scan", () => scanInChild());
    if (child.jobId !== queued.id) throw new Error(`the child ran job ${child.jobId}, not ${queued.id}`);
    cpus.scan = { ...cpus.scan, node: child.cpu.node, gc: child.cpu.gc, wall: child.wall };
    peaks.scan = child.peak;
    const scanS = child.wall;
    const done = (await jobStore().get(queued.id))!;
    if (done.state !== "succeeded") throw new Error(`scan ${done.state}: ${done.error}`);
    const read = (done.progress as { read: number }).read;
    const rows = await getDb().$queryRawUnsafe<Array<{ n: number }>>("SELECT count(*)::int AS n FROM triage_letters");
    const groups = await getDb().$queryRawUnsafe<Array<{ n: number }>>("SELECT count(*)::int AS n FROM triage_groups");
    const scanRate = read / scanS;
    // The bare read again after the scan (the scan leaves every letter in the queue): on a shared
    // machine the load drifts between phases; the ratio is against the mean of both bare reads.
    const bareAfter = SCAN_ONLY ? 0 : await phase("bare after", bare);
    const bareRate = (bareBefore + bareAfter) / 2;
    // The text search of the scanned letters, filled after the scan (the worker's
    // triage-search-fill task): off the scan's path, measured apart (absent in older trees),
    // after the second bare read, so that the phases the ratio is made of run as in older trees.
    const search = SCAN_ONLY ? null : await import("../lib/triage/letter-search").catch(() => null);
    const filled = search ? await phase("search fill", () => search.fillLetterSearch(getDb(), { maxMs: 600_000 })) : 0;
    const mb = (x: number) => `${Math.round(x / 1024 / 1024)} MB`;
    if (!SCAN_ONLY) {
      console.log(
        `bare amqplib read      ${Math.round(bareRate)} letters/s  (before the scan ${Math.round(bareBefore)}, after ${Math.round(bareAfter)})`,
      );
      console.log(`adapter stream()       ${Math.round(streamRate)} letters/s`);
    }
    console.log(
      `scan job (end to end)  ${Math.round(scanRate)} letters/s  (${read} read, ${rows[0].n} rows, ${groups[0].n} groups, ${scanS.toFixed(1)} s incl. reconciliation + summary)`,
    );
    if (!SCAN_ONLY) {
      console.log(`ratio scan / bare read ${(scanRate / bareRate).toFixed(2)}  (goal >= 0.70)`);
      console.log(`ratio scan / stream()  ${(scanRate / streamRate).toFixed(2)}`);
      console.log(
        `peak RSS of this harness  bare ${mb(peaks.bare.rss)}, stream ${mb(peaks.stream.rss)} (seeding excluded)`,
      );
    }
    const memLine = (m: Mem) =>
      `RSS ${mb(m.rss)}, heap used ${mb(m.heapUsed)}, external ${mb(m.external)} (array buffers ${mb(m.arrayBuffers)})`;
    console.log(`the scan's own process (a child of this harness, loaded and connected before the scan):`);
    console.log(`  before the scan       ${memLine(child.before)}`);
    console.log(`  at its peak RSS       ${memLine(child.peak)}`);
    console.log(`  largest of each       ${memLine(child.max)}`);
    if (child.liveHeap !== null)
      console.log(`  largest live heap (after a forced gc, every 5 s) ${mb(child.liveHeap)}`);
    const tl = child.timeline;
    const at = (f: number) => tl[Math.min(tl.length - 1, Math.floor(f * (tl.length - 1)))];
    if (tl.length > 0)
      console.log(
        `  RSS / heap used at 10%, 50%, 90% of the scan's time: ${[0.1, 0.5, 0.9].map((f) => `${mb(at(f)[1])} / ${mb(at(f)[2])}`).join(", ")}`,
      );
    for (const [name, m] of Object.entries(peaks)) {
      if (name === "scan") continue;
      console.log(
        `  harness, at ${name} peak: heap used ${mb(m.heapUsed)}, external ${mb(m.external)} (array buffers ${mb(m.arrayBuffers)}); load average after ${loads[name]}`,
      );
    }
    console.log(`load average after the scan ${loads.scan}`);
    // Where the CPU goes: on 2 cores the scan's Node, Postgres and RabbitMQ compete for the same
    // cores, so the sum per letter bounds the rate as much as the Node thread alone does.
    const us = (s: number) => `${Math.round((s * 1e6) / COUNT)}`.padStart(4);
    console.log(
      `CPU µs per letter      node (gc pauses)  postgres  rabbitmq   wall  (${cpuScope()}; see bench/cpu.ts)`,
    );
    for (const [name, c] of Object.entries(cpus)) {
      console.log(
        `  ${name.padEnd(20)} ${us(c.node)}  (${us(c.gc)})       ${us(c.postgres)}      ${us(c.rabbitmq)}      ${us(c.wall)}`,
      );
    }
    // What the goal allows: 0.7 of the bare rate on this machine's cores, shared by all three.
    const cores = availableParallelism();
    const scanCpu = cpus.scan.node + cpus.scan.postgres + cpus.scan.rabbitmq;
    if (!SCAN_ONLY)
      console.log(
        `at 0.7 of the bare rate, ${cores} cores allow at most ${Math.round((cores * 1e6) / (0.7 * bareRate))} µs of CPU per letter, all processes together; the scan used ${Math.round((scanCpu * 1e6) / read)}`,
      );
    if (read !== COUNT || rows[0].n !== COUNT) throw new Error(`scan read ${read}, indexed ${rows[0].n}, of ${COUNT}`);
    const bareAnchor = { name: "bare amqplib read", value: bareRate, unit: "letters/s" as const };
    const cpuOf = (name: string) => ({ reading: cpus[name], letters: COUNT, broker: "rabbitmq" });
    if (!SCAN_ONLY) {
      report({
        operation: `triage scan: bare amqplib read, ${COUNT} RabbitMQ letters (before the scan)`,
        rate: { value: bareBefore, unit: "letters/s" },
        cpu: cpuOf("bare"),
      });
      report({
        operation: "triage scan: adapter stream()",
        rate: { value: streamRate, unit: "letters/s" },
        anchor: bareAnchor,
        cpu: cpuOf("stream"),
      });
    }
    report({
      operation: "triage scan: scan job, end to end",
      rate: { value: scanRate, unit: "letters/s" },
      ...(SCAN_ONLY ? {} : { anchor: bareAnchor }),
      cpu: cpuOf("scan"),
      note: `its own process: ${COUNT} letters, peak ${memLine(child.peak)}; before the scan ${memLine(child.before)}`,
    });
    if (search) {
      if (filled !== COUNT) throw new Error(`search fill wrote ${filled} of ${COUNT} letters`);
      report({
        operation: "triage scan: search text fill after the scan",
        rate: { value: COUNT / cpus["search fill"].wall, unit: "letters/s" },
        cpu: cpuOf("search fill"),
      });
    }
  } finally {
    clearInterval(sampler);
    if (!KEEP_QUEUE) {
      const conn = await amqp.connect(AMQP);
      const ch = await conn.createChannel();
      await ch.deleteQueue(QUEUE);
      await conn.close();
    }
    await closeDb();
    const store = (await import("../lib/triage/index-store")) as { closeBulkPool?: () => Promise<void> };
    await store.closeBulkPool?.(); // absent before the bulk pool existed (the bench also runs against older trees)
    await db.drop();
  }
}

/** Runs the queued scan in a child process (this file, BENCH_SCAN_CHILD=1) and returns what it measured. */
function scanInChild(): Promise<ChildResult> {
  const root = path.resolve(import.meta.dirname, "..");
  const tsx = path.join(root, "node_modules", ".bin", "tsx");
  const child = spawn(tsx, ["--conditions=react-server", "bench/triage-scan.ts"], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      BENCH_SCAN_CHILD: "1",
      BENCH_QUEUE: QUEUE,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --expose-gc`.trim(),
    },
  });
  let out = "";
  let result: ChildResult | null = null;
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    out += chunk;
    let nl = out.indexOf("\n");
    while (nl >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (line.startsWith(RESULT)) result = JSON.parse(line.slice(RESULT.length)) as ChildResult;
      else console.log(line);
      nl = out.indexOf("\n");
    }
  });
  return new Promise((resolve, reject) =>
    child.on("exit", (code, signal) => {
      if (code === 0 && result) resolve(result);
      else
        reject(
          new Error(`the scan's process ended with ${signal ?? `code ${code}`} and ${result ? "a" : "no"} result`),
        );
    }),
  );
}

/**
 * The child: loads what the worker loads for a scan, connects, then runs the queued scan job once,
 * sampling its own memory every 50 ms and its CPU around the job.
 */
async function scanChild() {
  const gc = globalThis.gc;
  const { JobWorker } = await import("../lib/jobs/worker");
  const { scanHandler } = await import("../lib/triage/scan");
  const { closeDb, getDb } = await import("../lib/db");
  const adapter = new RabbitMqAdapter(testConfig({ id: CONNECTION, dlqs: [{ name: QUEUE }], discover: false }), {
    allManagedHeaders: MANAGED_HEADERS,
    // The console's default is 1 s: on a loaded machine a deep queue's next window can take longer,
    // and the read then ends short (reported as a shortfall, and this bench throws).
    ...(process.env.BENCH_IDLE_MS ? { idleMs: Number(process.env.BENCH_IDLE_MS) } : {}),
  });
  await getDb().$queryRawUnsafe("SELECT 1");
  const worker = new JobWorker({ handlers: { scan: scanHandler({ adapterFor: () => adapter }) }, owner: "bench" });
  gc?.();
  const before = memNow();
  let peak = before;
  const max = { ...before };
  const sample = () => {
    const m = memNow();
    if (m.rss > peak.rss) peak = m;
    for (const k of Object.keys(max) as Array<keyof Mem>) max[k] = Math.max(max[k], m[k]);
  };
  const sampler = setInterval(sample, 50);
  const w0 = performance.now();
  const timeline: ChildResult["timeline"] = [];
  const tick = setInterval(() => {
    const m = memNow();
    timeline.push([Math.round((performance.now() - w0) / 100) / 10, m.rss, m.heapUsed]);
  }, 2000);
  let liveHeap: number | null = null;
  const live =
    process.env.BENCH_LIVE_HEAP === "1" && gc
      ? setInterval(() => {
          gc();
          liveHeap = Math.max(liveHeap ?? 0, process.memoryUsage().heapUsed);
        }, 5000)
      : null;
  const c0 = cpuNow();
  const job = await worker.runOnce();
  const c = await cpuSince(c0);
  const wall = (performance.now() - w0) / 1000;
  sample();
  clearInterval(sampler);
  clearInterval(tick);
  if (live) clearInterval(live);
  await adapter.close();
  await closeDb();
  const store = (await import("../lib/triage/index-store")) as { closeBulkPool?: () => Promise<void> };
  await store.closeBulkPool?.();
  if (!job) throw new Error("the scan's process found no job to run");
  const result: ChildResult = {
    jobId: job.id,
    before,
    peak,
    max,
    liveHeap,
    timeline,
    cpu: { node: c.node, gc: c.gc },
    wall,
  };
  process.stdout.write(`${RESULT}${JSON.stringify(result)}\n`);
}

(process.env.BENCH_SCAN_CHILD === "1" ? scanChild() : main()).catch((e) => {
  console.error(e);
  process.exit(1);
});
