/**
 * Triage scan throughput against the bare client read of the same DLQ, in one run: 50,000 ~1 KB
 * letters with exception headers in a DLQ of BENCH_BROKER (rabbitmq, the default; kafka; sqs: see
 * bench/scan-brokers.ts for each one's DLQ and bare read); (1) the bare client read,
 * (2) the adapter's stream(), (3) the scan job (grouping, classification, encryption, batched
 * upserts into a fresh Postgres database, reconciliation and group summary), (4) the bare read
 * again, since load drifts on a shared machine. Prints per-phase peak RSS with the heap and
 * off-heap sizes at that moment, the load average after each phase, and per phase the CPU time per
 * letter of this process, of the bench database's Postgres and of the broker's server process
 * (RabbitMQ's beam.smp, Kafka's or ElasticMQ's java; from /proc: the services are shared, so
 * others' work shows up too).
 *
 * The scan runs in a child process of its own (this file again, BENCH_SCAN_CHILD=1): its peak
 * RSS, heap and off-heap sizes and its Node CPU are those of a process that loaded the scan's
 * modules and ran one scan, not of this harness, which also seeded the queue, ran the migrations'
 * wasm engine and read the queue bare (before 2026-12-05 they shared one process, and the scan's
 * peak RSS included all of that). Postgres and broker CPU are read from here, as before.
 *   npm run bench:triage-scan          (BENCH_COUNT to change the count; smoke 2,000)
 *   BENCH_BROKER=kafka|sqs             the DLQ on Kafka or SQS (ElasticMQ) instead of RabbitMQ
 *                                      (npm run bench runs all three, each its own row)
 *   BENCH_SCAN_ONLY=1                  seed and scan only (no bare reads, stream or search fill):
 *                                      for the memory of large scans (BENCH_COUNT=1000000)
 *   BENCH_QUEUE=name BENCH_KEEP_QUEUE=1 a queue (topic) of your own, seeded only when it does not hold
 *                                      BENCH_COUNT letters already, and kept at the end: repeated
 *                                      large runs skip the seeding (delete it yourself afterwards)
 *   BENCH_READ_BUFFER=2097152          RabbitMQ: the adapter's read-ahead in bytes (readBufferBytes;
 *                                      default the adapter's 16 MiB, at most 5,000 letters a window)
 *   BENCH_IDLE_MS=10000                RabbitMQ: the scan's reader waits this long for a letter
 *                                      before it ends the read short (default the adapter's 1 s)
 *   BENCH_LIVE_HEAP=1                  the child also forces a full gc every 5 s and reports the
 *                                      largest live heap it saw (what the scan retains)
 *   BENCH_CPU_PROF=dir                 the scan's process writes a V8 CPU profile (--cpu-prof) there
 *                                      (tsx's launcher writes a small one beside it)
 *   BENCH_WARMUP=5000                  letters the scan's process first runs through the scan's path
 *                                      (stream, index row, column arrays; nothing written) before the
 *                                      measured scan: see warmUp(). 0 measures a cold process, as
 *                                      before 2026-12-06 (second session). Smoke 200.
 */
import { spawn } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import path from "node:path";
import { applyMigrations } from "../scripts/lib/migrations";
import { createTestDatabase } from "../scripts/lib/test-database";
import { type Beside, besideLine, measureBeside } from "./beside";
import { nodeOptionsAsConsole } from "./console-options";
import { copyIn, copyLines } from "./copy-floor";
import { cpuNow, cpuScope, cpuSince, measureBroker, type Cpu } from "./cpu";
import { report, size } from "./report";
import { scanBroker } from "./scan-brokers";

const COUNT = size("BENCH_COUNT", 50_000, 2_000);
const WARMUP = Math.min(size("BENCH_WARMUP", 5_000, 200), COUNT);
/**
 * The broker and its DLQ (the machine's RabbitMQ, or another local node: DLQ_TEST_AMQP_PORT, see
 * its test-kit; Kafka at KAFKA_BROKERS; ElasticMQ at SQS_ENDPOINT). The name is unique per run:
 * engineers share the broker, and two benches on one queue would steal each other's letters.
 */
const BROKER = scanBroker(process.env.BENCH_BROKER || "rabbitmq", process.env.BENCH_QUEUE);
measureBroker(BROKER.cpu);
const QUEUE = BROKER.queue;
const CONNECTION = `bench-${BROKER.name}`;
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
  /** What warmUp() ran before the scan (null: none), and its Node CPU in seconds. */
  warmUp: { letters: number; node: number; wall: number } | null;
  /** What a page served by the scan's process met meanwhile (bench/beside.ts). */
  beside: Beside;
}
const RESULT = "BENCH_SCAN_CHILD_RESULT ";

async function adapterRead(): Promise<number> {
  const adapter = await BROKER.adapter(CONNECTION);
  const t0 = performance.now();
  let n = 0;
  for await (const _ of adapter.stream(QUEUE)) n++;
  const s = (performance.now() - t0) / 1000;
  await adapter.close();
  if (n !== COUNT) throw new Error(`the adapter's stream() read ${n} of ${COUNT}`);
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
    await BROKER.seed(COUNT, KEEP_QUEUE);
    console.log(`seeded in ${((performance.now() - s0) / 1000).toFixed(0)} s`);
    const peaks: Record<string, Mem> = {};
    const loads: Record<string, string> = {};
    const cpus: Record<string, Cpu & { wall: number }> = {};
    /** `fn` may restart the phase's clock and CPU reading (the Kafka consumer, once its group is joined). */
    const phase = async <T>(name: string, fn: (restart: () => void) => Promise<T>): Promise<T> => {
      globalThis.gc?.();
      peak = noMem();
      sample();
      let c0 = cpuNow();
      let w0 = performance.now();
      const r = await fn(() => {
        c0 = cpuNow();
        w0 = performance.now();
      });
      cpus[name] = { ...(await cpuSince(c0)), wall: (performance.now() - w0) / 1000 };
      sample();
      peaks[name] = peak;
      loads[name] = loadavg()[0].toFixed(1);
      return r;
    };
    const bare = (restart: () => void) => BROKER.bare(COUNT, restart);
    const bareBefore = SCAN_ONLY ? 0 : await phase("bare", bare);
    if (!SCAN_ONLY) await BROKER.settle(COUNT);
    const streamRate = SCAN_ONLY ? 0 : await phase("stream", adapterRead);
    if (!SCAN_ONLY) await BROKER.settle(COUNT);
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
    // The scan's rows as it wrote them (before the search fill adds to them), for the write floor below.
    const written = SCAN_ONLY ? null : await scannedRows(db.url);
    // The bare read again after the scan (the scan leaves every letter in the queue): on a shared
    // machine the load drifts between phases; the ratio is against the mean of both bare reads.
    await BROKER.settle(COUNT);
    const bareAfter = SCAN_ONLY ? 0 : await phase("bare after", bare);
    const bareRate = (bareBefore + bareAfter) / 2;
    // The text search of the scanned letters, filled after the scan (the worker's
    // triage-search-fill task): off the scan's path, measured apart (absent in older trees),
    // after the second bare read, so that the phases the ratio is made of run as in older trees.
    const search = SCAN_ONLY ? null : await import("../lib/triage/letter-search").catch(() => null);
    const filled = search ? await phase("search fill", () => search.fillLetterSearch(getDb(), { maxMs: 600_000 })) : 0;
    // The floor of any index Postgres keeps: the same rows written again by a bare writer (see bulkFloor).
    const floorPhase = async (name: string, indexed: boolean) => {
      if (!written) return 0;
      const w = await phase(name, (restart) => bulkFloor(db.url, written, indexed, restart));
      await w.check();
      return w.rate;
    };
    const floorPlain = await floorPhase("write, no index", false);
    const floorIndexed = await floorPhase("write, indexed", true);
    const mb = (x: number) => `${Math.round(x / 1024 / 1024)} MB`;
    if (!SCAN_ONLY) {
      console.log(
        `${BROKER.bareName.padEnd(22)} ${Math.round(bareRate)} letters/s  (before the scan ${Math.round(bareBefore)}, after ${Math.round(bareAfter)})`,
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
    const wu = child.warmUp;
    console.log(
      wu
        ? `the scan's process ran its path over the DLQ's first ${wu.letters} letters before the scan (nothing written; not in the scan's figures): ${Math.round((wu.node * 1e6) / wu.letters)} µs of Node per letter, ${wu.wall.toFixed(1)} s (BENCH_WARMUP=0: a cold process)`
        : `the scan ran in a cold process (no warm-up: BENCH_WARMUP=0, or a read that costs letters)`,
    );
    console.log(besideLine("scan", child.beside));
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
      `CPU µs per letter      node (gc pauses)  postgres  ${BROKER.cpu.padEnd(9)} wall  (${cpuScope()}; see bench/cpu.ts)`,
    );
    for (const [name, c] of Object.entries(cpus)) {
      console.log(
        `  ${name.padEnd(20)} ${us(c.node)}  (${us(c.gc)})       ${us(c.postgres)}      ${us(c.broker)}      ${us(c.wall)}`,
      );
    }
    // What the goal allows: 0.7 of the bare rate on this machine's cores, shared by all three.
    const cores = availableParallelism();
    const scanCpu = cpus.scan.node + cpus.scan.postgres + cpus.scan.broker;
    if (!SCAN_ONLY)
      console.log(
        `at 0.7 of the bare rate, ${cores} cores allow at most ${Math.round((cores * 1e6) / (0.7 * bareRate))} µs of CPU per letter, all processes together; the scan used ${Math.round((scanCpu * 1e6) / read)}`,
      );
    if (read !== COUNT || rows[0].n !== COUNT) {
      // What the scan said of the letters it did not read (another reader holding them, on SQS).
      const partial = (done.progress as { partial?: { reason?: string } }).partial?.reason;
      throw new Error(`scan read ${read}, indexed ${rows[0].n}, of ${COUNT}${partial ? `: ${partial}` : ""}`);
    }
    let floor: { plain: number; indexed: number; scanOwn: number } | null = null;
    // The goal (issue 34): the scan's console + Postgres CPU per letter at most the bare read's whole CPU per letter.
    if (!SCAN_ONLY) {
      const perLetterUs = (c: number) => (c * 1e6) / COUNT;
      const scanOwn = perLetterUs(cpus.scan.node + cpus.scan.postgres);
      const bareCpu = (n: string) => perLetterUs(cpus[n].node + cpus[n].postgres + cpus[n].broker);
      const bareWhole = (bareCpu("bare") + bareCpu("bare after")) / 2;
      console.log(
        `scan console + Postgres ${Math.round(scanOwn)} µs per letter, bare read's whole ${Math.round(bareWhole)} (mean of both): ${(scanOwn / bareWhole).toFixed(2)}x (goal <= 1.0x)`,
      );
      // A second anchor: the bare read plus a bare write of the same rows (Node + Postgres), the
      // least any index Postgres keeps per letter can cost; with the indexes of triage_letters.
      const writeCpu = (n: string) => perLetterUs(cpus[n].node + cpus[n].postgres);
      floor = {
        plain: bareWhole + writeCpu("write, no index"),
        indexed: bareWhole + writeCpu("write, indexed"),
        scanOwn,
      };
      console.log(
        `floor: bare read's whole + bare COPY of the same rows, 500 at a time (node + postgres): no index ${Math.round(floor.plain)} µs per letter, with triage_letters' indexes ${Math.round(floor.indexed)}; the scan's console + Postgres ${(scanOwn / floor.plain).toFixed(2)}x and ${(scanOwn / floor.indexed).toFixed(2)}x of them`,
      );
    }
    const bareAnchor = { name: BROKER.bareName, value: bareRate, unit: "letters/s" as const };
    const cpuOf = (name: string) => ({ reading: cpus[name], letters: COUNT, broker: BROKER.cpu });
    const on = BROKER.name === "rabbitmq" ? "" : ` on ${BROKER.label}`;
    if (!SCAN_ONLY) {
      report({
        operation: `triage scan${on}: ${BROKER.bareName}, ${COUNT} ${BROKER.label} letters (before the scan)`,
        rate: { value: bareBefore, unit: "letters/s" },
        cpu: cpuOf("bare"),
      });
      report({
        operation: `triage scan${on}: adapter stream()`,
        rate: { value: streamRate, unit: "letters/s" },
        anchor: bareAnchor,
        cpu: cpuOf("stream"),
      });
    }
    report({
      operation: `triage scan${on}: scan job, end to end`,
      rate: { value: scanRate, unit: "letters/s" },
      ...(SCAN_ONLY ? {} : { anchor: bareAnchor }),
      cpu: cpuOf("scan"),
      note: `its own process: ${COUNT} letters, peak ${memLine(child.peak)}; before the scan ${memLine(child.before)}`,
    });
    if (floor) {
      const writeRow = (name: string, rate: number, what: string) =>
        report({
          operation: `triage scan${on}: floor: bare write of the scan's ${COUNT} rows (COPY, 500 rows each), ${what}`,
          rate: { value: rate, unit: "letters/s" },
          cpu: cpuOf(name),
        });
      writeRow("write, no index", floorPlain, "no index");
      writeRow("write, indexed", floorIndexed, "triage_letters' indexes");
      const f = floor as { plain: number; indexed: number; scanOwn: number };
      report({
        operation: `triage scan${on}: scan job's console + Postgres CPU per letter, against the floor (µs)`,
        rate: { value: f.scanOwn, unit: "µs" },
        anchor: { name: "bare read + indexed bare write, whole CPU", value: f.indexed, unit: "µs" },
        ratio: f.scanOwn / f.indexed,
        note: `against the bare read + an unindexed bare write (${Math.round(f.plain)} µs): ${(f.scanOwn / f.plain).toFixed(2)}x`,
      });
    }
    if (search) {
      if (filled !== COUNT) throw new Error(`search fill wrote ${filled} of ${COUNT} letters`);
      report({
        operation: `triage scan${on}: search text fill after the scan`,
        rate: { value: COUNT / cpus["search fill"].wall, unit: "letters/s" },
        cpu: cpuOf("search fill"),
      });
    }
  } finally {
    clearInterval(sampler);
    if (!KEEP_QUEUE)
      await BROKER.drop().catch((e) => console.error(`could not drop ${QUEUE}: ${(e as Error).message}`));
    await closeDb();
    const store = (await import("../lib/triage/index-store")) as { closeBulkPool?: () => Promise<void> };
    await store.closeBulkPool?.(); // absent before the bulk pool existed (the bench also runs against older trees)
    await db.drop();
  }
}

/** Every column of triage_letters, in order; values as Postgres's text (bytea as \\x hex), null as null. */
async function scannedRows(url: string): Promise<{ columns: string[]; rows: Array<Array<string | null>> }> {
  const { Client } = await import("pg");
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query<Array<string | null>>({
      text: "SELECT * FROM triage_letters ORDER BY id",
      rowMode: "array",
      types: { getTypeParser: () => (v: string) => v },
    });
    return { columns: res.fields.map((f) => f.name), rows: res.rows };
  } finally {
    await client.end();
  }
}

/**
 * A bare bulk write of `written` (the scan's rows, read back beforehand) into a fresh table: one
 * `COPY … FROM STDIN` of 500 rows at a time over one connection, text format, no conflict
 * handling, no trigger. `indexed`: the table has every index of triage_letters (LIKE … INCLUDING
 * ALL, which copies no trigger); else none, not even a primary key. What Postgres and this Node
 * process spend per row is the floor of any index Postgres keeps per letter. Returns rows/s.
 */
async function bulkFloor(
  url: string,
  written: { columns: string[]; rows: Array<Array<string | null>> },
  indexed: boolean,
  /** Called once the table exists and the connection is open: the measured part starts there. */
  restart: () => void,
): Promise<{ rate: number; check(): Promise<void> }> {
  const { Client } = await import("pg");
  const client = new Client({ connectionString: url });
  await client.connect();
  const table = indexed ? "bench_floor_indexed" : "bench_floor_plain";
  const end = async () => {
    await client.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    await client.end();
  };
  try {
    await client.query(
      `CREATE TABLE ${table} (LIKE triage_letters ${indexed ? "INCLUDING ALL" : "INCLUDING DEFAULTS"})`,
    );
    restart();
    const copy = `COPY ${table} (${written.columns.map((c) => `"${c}"`).join(", ")}) FROM STDIN`;
    const t0 = performance.now();
    for (let i = 0; i < written.rows.length; i += 500) {
      await copyIn(client, copy, copyLines(written.rows.slice(i, i + 500)));
    }
    const rate = written.rows.length / ((performance.now() - t0) / 1000);
    return {
      rate,
      // After the measured part: every row is there, then the table goes.
      async check() {
        try {
          const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
          if (rows[0].n !== written.rows.length)
            throw new Error(`${table} holds ${rows[0].n} of ${written.rows.length} rows`);
        } finally {
          await end();
        }
      },
    };
  } catch (e) {
    await end();
    throw e;
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
      // The options scripts/start.sh gives the console (yours in NODE_OPTIONS win).
      NODE_OPTIONS: nodeOptionsAsConsole([
        "--expose-gc",
        ...(process.env.BENCH_CPU_PROF
          ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`]
          : []),
      ]),
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
  const adapter = await BROKER.adapter(CONNECTION, {
    ...(process.env.BENCH_IDLE_MS ? { idleMs: Number(process.env.BENCH_IDLE_MS) } : {}),
  });
  await getDb().$queryRawUnsafe("SELECT 1");
  const worker = new JobWorker({ handlers: { scan: scanHandler({ adapterFor: () => adapter }) }, owner: "bench" });
  const warm = await warmUp(adapter);
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
  const besideScan = measureBeside(() => getDb().$queryRawUnsafe("SELECT 1"));
  const c0 = cpuNow();
  const job = await worker.runOnce();
  const c = await cpuSince(c0);
  const wall = (performance.now() - w0) / 1000;
  const beside = await besideScan.stop();
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
    warmUp: warm,
    beside,
  };
  // No exit of its own: a client left open keeps this process, and the harness waiting on it, alive.
  process.stdout.write(`${RESULT}${JSON.stringify(result)}\n`);
}

/**
 * A console process is long-lived (its worker runs every scan and indexer round), but the bench's
 * scan runs in a fresh one: there V8 runs the scan's path interpreted, then compiles it, over the
 * first few thousand letters. That is about 0.5 s of CPU once per process, some 15 µs a letter of
 * a 30,000-letter scan, and not what a letter costs. So the child first runs the same path
 * (the adapter's stream, toIndexRow under the DLQ's rules and masking, the column arrays) over the
 * first WARMUP letters of the same DLQ, and writes nothing, so that Postgres (measured from the
 * harness around the whole child) sees only the scan. Skipped for a DLQ whose reads cost letters.
 */
async function warmUp(
  adapter: import("../lib/brokers/contract/adapter").BrokerAdapter,
): Promise<ChildResult["warmUp"]> {
  if (WARMUP <= 0 || (await adapter.describeDlq(QUEUE)).readRisk) return null;
  const { PAYLOAD_CAP_BYTES, toIndexRow } = await import("../lib/triage/index-row");
  const { prepareLetters } = await import("../lib/triage/index-store");
  const { loadRules } = await import("../lib/triage/rules-store");
  const { searchMaskingFor } = await import("../lib/triage/masked-search");
  const { loadMaskingConfig } = await import("../lib/masking/store");
  const { maskingHashKey } = await import("../lib/masking/key");
  const { keyring } = await import("../lib/crypto/payload-cipher");
  const { getDb } = await import("../lib/db");
  const db = getDb();
  const ctx = {
    connectionId: CONNECTION,
    queue: QUEUE,
    rules: (await loadRules(db)).rules,
    ring: keyring(),
    randomAccess: adapter.capabilities.randomAccess,
    search: searchMaskingFor(await loadMaskingConfig(db), CONNECTION, QUEUE, maskingHashKey()),
  };
  const c0 = cpuNow();
  const w0 = performance.now();
  let n = 0;
  let rows: ReturnType<typeof toIndexRow>[] = [];
  for await (const letter of adapter.stream(QUEUE, { maxBodyBytes: PAYLOAD_CAP_BYTES })) {
    rows.push(toIndexRow(letter, ctx));
    if (rows.length === 500) {
      prepareLetters(rows, db);
      rows = [];
    }
    if (++n >= WARMUP) break;
  }
  const c = await cpuSince(c0);
  const wall = (performance.now() - w0) / 1000;
  // Every letter back in the DLQ before the scan reads it.
  await BROKER.settle(COUNT);
  return { letters: n, node: c.node, wall };
}

(process.env.BENCH_SCAN_CHILD === "1" ? scanChild() : main()).catch((e) => {
  console.error(e);
  process.exit(1);
});
