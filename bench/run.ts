/**
 * Runs every benchmark in bench/, one after another (each in its own process, nothing else of
 * this runner's running beside it), then prints one table of their rows: operation, rate, the
 * anchor measured in the same run, the ratio, and CPU µs per letter by process.
 *   npm run bench                    every benchmark at full size
 *   npm run bench -- --smoke         every benchmark at its smoke size (CI: scripts/test.sh bench)
 *   npm run bench -- glob sqs-read   only these; --skip=page-speed leaves some out
 *   npm run bench -- triage-scan:kafka   one broker's run of a benchmark run per broker (report.ts
 *                                    PER_BROKER: "triage-scan" alone runs it on every broker)
 * A benchmark fails when it exits non-zero, reports no row, or (in a smoke) runs past
 * BENCH_SMOKE_TIMEOUT seconds (default 300); the runner then exits 1 after the table. Nothing
 * about the figures is asserted. The rows are also in the JSON lines file it names at the end
 * (BENCH_REPORT to choose it). STAGE_COUNT_FILE, if set, receives the number of benchmarks passed.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BENCHES, PER_BROKER, type Row, table } from "./report";

const args = process.argv.slice(2);
const smoke = args.includes("--smoke");
const skip = new Set(
  args
    .filter((a) => a.startsWith("--skip="))
    .flatMap((a) => a.slice(7).split(","))
    .filter(Boolean),
);
const named = args.filter((a) => !a.startsWith("--"));
/** Each benchmark, or each of its runs per broker: the file, the entry's name and its environment. */
const ENTRIES = BENCHES.flatMap((file) =>
  (PER_BROKER[file] ?? [null]).map((broker) => ({
    file,
    name: broker ? `${file}:${broker}` : file,
    env: broker ? { BENCH_BROKER: broker } : ({} as Record<string, string>),
  })),
);
const matches = (e: (typeof ENTRIES)[number], n: string) => n === e.name || n === e.file;
for (const n of [...named, ...skip])
  if (!ENTRIES.some((e) => matches(e, n)))
    throw new Error(`no benchmark ${n} (${ENTRIES.map((e) => e.name).join(", ")})`);
const chosen = ENTRIES.filter(
  (e) => (named.length === 0 || named.some((n) => matches(e, n))) && ![...skip].some((n) => matches(e, n)),
);
const TIMEOUT_S = Number(process.env.BENCH_SMOKE_TIMEOUT ?? 300);

const root = path.resolve(import.meta.dirname, "..");
const reportFile =
  process.env.BENCH_REPORT ??
  path.join(
    root,
    ".cache",
    "bench",
    `${smoke ? "smoke" : "full"}-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl`,
  );
mkdirSync(path.dirname(reportFile), { recursive: true });
rmSync(reportFile, { force: true });

/** The benchmark running now: its own process group, stopped with this runner (Ctrl-C, a stopped CI run). */
let current: number | null = null;
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    if (current)
      try {
        process.kill(-current, "SIGKILL");
      } catch {
        // ended meanwhile
      }
    process.exit(130);
  });

function run(
  entry: (typeof ENTRIES)[number],
): Promise<{ code: number | null; signal: string | null; seconds: number }> {
  const bench = entry.name;
  const t0 = performance.now();
  const tsx = path.join(root, "node_modules", ".bin", "tsx");
  const child = spawn(tsx, ["--conditions=react-server", `bench/${entry.file}.ts`], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...entry.env, BENCH_REPORT: reportFile, ...(smoke ? { BENCH_SMOKE: "1" } : {}) },
    detached: true, // its own process group: a timeout ends the benchmark's children too
  });
  current = child.pid ?? null;
  const timer = smoke
    ? setTimeout(() => {
        console.error(`[bench] ${bench} ran past ${TIMEOUT_S} s: stopping it`);
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // ended meanwhile
        }
      }, TIMEOUT_S * 1000)
    : null;
  return new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      if (timer) clearTimeout(timer);
      current = null;
      resolve({ code, signal, seconds: (performance.now() - t0) / 1000 });
    }),
  );
}

const readRows = (): Row[] =>
  existsSync(reportFile)
    ? readFileSync(reportFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Row)
    : [];

async function main() {
  const results: Array<{ bench: string; ok: boolean; why: string; seconds: number }> = [];
  const t0 = performance.now();
  for (const entry of chosen) {
    const bench = entry.name;
    console.log(`\n[bench] ${bench}${smoke ? " (smoke size)" : ""}`);
    const before = readRows().length;
    const r = await run(entry);
    const rows = readRows().length - before;
    const why =
      r.code !== 0
        ? r.signal
          ? `killed (${r.signal})`
          : `exit ${r.code}`
        : rows === 0
          ? "reported no row (bench/report.ts)"
          : "";
    results.push({ bench, ok: !why, why, seconds: r.seconds });
    console.log(`[bench] ${bench}: ${why || `${rows} rows`} in ${r.seconds.toFixed(1)} s`);
  }
  const rows = readRows();
  console.log(`\n${smoke ? "Smoke run (small sizes: the figures prove only that each benchmark runs)" : "Benchmarks"}`);
  console.log(table(rows));
  console.log(`\nrows: ${reportFile}`);
  console.log(
    `wall time: ${((performance.now() - t0) / 1000).toFixed(0)} s (${results.map((r) => `${r.bench} ${r.seconds.toFixed(0)} s`).join(", ")})`,
  );
  const failed = results.filter((r) => !r.ok);
  if (process.env.STAGE_COUNT_FILE) writeFileSync(process.env.STAGE_COUNT_FILE, String(results.length - failed.length));
  if (failed.length) {
    console.error(`[bench] FAILED: ${failed.map((f) => `${f.bench} (${f.why})`).join(", ")}`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
