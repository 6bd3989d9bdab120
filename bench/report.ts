/**
 * What every benchmark shares: its size (full, or the smoke's), and its results as rows of one
 * format that bench/run.ts gathers into one table.
 *
 * Size: `BENCH_SMOKE=1` (bench/run.ts --smoke sets it) or `--smoke` on a benchmark's command line
 * runs it at a small size: every code path, no figure worth reading. A size's own variable
 * (BENCH_COUNT, …) still wins over both.
 *
 * Results: report() prints nothing (each benchmark prints its own lines, as it always has) and
 * appends the row as one JSON line to the file BENCH_REPORT names, if any.
 */
import { appendFileSync } from "node:fs";
import path from "node:path";
import type { Cpu } from "./cpu";

/** Every benchmark, in the order bench/run.ts runs them: no services first, then reads, then what writes much. */
export const BENCHES = [
  "glob",
  "classify",
  "safe-regex",
  "scan-path",
  "rabbitmq-read",
  "kafka-read",
  "sqs-read",
  "pulsar-mover",
  "operations",
  "triage-scan",
  "triage-queries",
  "indexing",
  "redrive-mover",
  "redrive-rate",
  "page-speed",
];
/**
 * Benchmarks run once per broker (BENCH_BROKER set to each in turn): each run is its own entry of
 * bench/run.ts ("triage-scan:kafka"), its own smoke, and its own rows of the table.
 */
export const PER_BROKER: Record<string, readonly string[]> = { "triage-scan": ["rabbitmq", "kafka", "sqs"] };
/** The files of bench/ that are not benchmarks. */
export const BENCH_HELPERS = [
  "bare-reads",
  "beside",
  "console-options",
  "copy-floor",
  "cpu",
  "redrive-common",
  "report",
  "run",
  "scan-brokers",
];

export const SMOKE = process.env.BENCH_SMOKE === "1" || process.argv.includes("--smoke");

/** A benchmark's size: the variable `name` if set, else the smoke's size in a smoke, else the full size. */
export function size(name: string, full: number, smoke: number): number {
  const v = process.env[name];
  if (v !== undefined && v !== "") return Number(v);
  return SMOKE ? smoke : full;
}
/**
 * The same for a list (comma-separated in the variable). A variable set to nothing is the empty
 * list: `BENCH_RATES= npm run bench:redrive-rate` runs no rate-limited engine (it ran both before).
 */
export function sizes(name: string, full: string, smoke: string): string[] {
  const v = process.env[name];
  return (v !== undefined ? v : SMOKE ? smoke : full).split(",").filter(Boolean);
}

export type Unit = "letters/s" | "ms" | "µs" | "s" | "calls" | "B";
export interface Figure {
  value: number;
  unit: Unit;
}
export interface Row {
  /** The benchmark's file name without .ts (set by report()). */
  bench: string;
  operation: string;
  rate: Figure;
  /** What the rate is measured against, in the same run. */
  anchor?: { name: string; value: number; unit: Unit };
  /** rate / anchor (for times: how many times the anchor's time). */
  ratio?: number;
  /** CPU µs per letter by process, over `letters` letters. */
  cpu?: { node: number; gc: number; postgres: number; postgresAll: number; broker: number; brokerName: string };
  letters?: number;
  smoke: boolean;
  note?: string;
}

const FILE = path.basename(process.argv[1] ?? "bench", ".ts");
/** The benchmark's name in the table: its file, and the broker for one run per broker. */
const BENCH = PER_BROKER[FILE] ? `${FILE}:${process.env.BENCH_BROKER || PER_BROKER[FILE][0]}` : FILE;

/** CPU seconds (a cpuSince reading) as µs per letter. */
export function cpuPerLetter(c: Cpu, letters: number, brokerName: string): NonNullable<Row["cpu"]> {
  const us = (s: number) => Math.round((s * 1e6) / Math.max(1, letters));
  return {
    node: us(c.node),
    gc: us(c.gc),
    postgres: us(c.postgres),
    postgresAll: us(c.postgresAll),
    broker: us(c.broker),
    brokerName,
  };
}

export function report(r: {
  operation: string;
  rate: Figure;
  anchor?: Row["anchor"];
  ratio?: number;
  cpu?: { reading: Cpu; letters: number; broker: string };
  note?: string;
}): Row {
  const ratio =
    r.ratio ??
    (r.anchor && r.anchor.value !== 0 && Number.isFinite(r.anchor.value) ? r.rate.value / r.anchor.value : undefined);
  const row: Row = {
    bench: BENCH,
    operation: r.operation,
    rate: r.rate,
    anchor: r.anchor,
    ratio,
    cpu: r.cpu ? cpuPerLetter(r.cpu.reading, r.cpu.letters, r.cpu.broker) : undefined,
    letters: r.cpu?.letters,
    smoke: SMOKE,
    note: r.note,
  };
  if (process.env.BENCH_REPORT) appendFileSync(process.env.BENCH_REPORT, `${JSON.stringify(row)}\n`);
  return row;
}

const group = (n: number) => Math.round(n).toLocaleString("en-US");
function figure(value: number, unit: string): string {
  if (unit === "letters/s") return `${group(value)}/s`;
  if (unit === "calls") return `${group(value)} calls`;
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${unit}`;
}

/** The table: one line per row, benchmarks in the order they ran. */
export function table(rows: Row[]): string {
  const head = ["operation", "rate", "anchor (same run)", "ratio", "node (gc)", "postgres", "broker", "total"];
  const lines = rows.map((r) => {
    const c = r.cpu;
    return [
      `${r.bench}: ${r.operation}`,
      figure(r.rate.value, r.rate.unit),
      r.anchor ? `${r.anchor.name} ${figure(r.anchor.value, r.anchor.unit)}` : "",
      r.ratio === undefined ? "" : r.ratio.toFixed(2),
      c ? `${c.node} (${c.gc})` : "",
      c ? String(c.postgres) : "",
      c ? `${c.broker} ${c.brokerName}` : "",
      c ? String(c.node + c.postgres + c.broker) : "",
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (l: string[]) =>
    l.map((cell, i) => (i === 0 || i === 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(" | ");
  return [
    "CPU: µs per letter; postgres: the benchmark's own backends and Postgres's background processes (bench/cpu.ts)",
    fmt(head),
    widths.map((w) => "-".repeat(w)).join("-|-"),
    ...lines.map(fmt),
  ].join("\n");
}

/** The fastest of `runs` calls of `f`, in µs: on a busy machine the least disturbed run. */
export function bestUs(f: () => void, runs = 5): number {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    min = Math.min(min, performance.now() - t0);
  }
  return min * 1000;
}
