import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

/**
 * Benchmarks that cannot rot: every file in bench/ is either a benchmark that bench/run.ts runs
 * (and CI runs at its smoke size, scripts/test.sh stages bench-smoke and bench-pages) or a helper,
 * and every benchmark sizes itself and reports its rows through bench/report.ts.
 */
const root = path.resolve(import.meta.dirname, "..");
const read = (f: string) => readFileSync(path.join(root, f), "utf8");

let dir = "";
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "dlq-bench-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe("the benchmark list", () => {
  it("names every file of bench/: a new benchmark must join the runner (and so CI's smoke)", async () => {
    const { BENCHES, BENCH_HELPERS } = await import("../bench/report");
    const files = readdirSync(path.join(root, "bench"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => f.slice(0, -3))
      .sort();
    expect(files).toEqual([...BENCHES, ...BENCH_HELPERS].sort());
  });

  it("has every benchmark take its size from report.ts and report its rows", async () => {
    const { BENCHES } = await import("../bench/report");
    for (const b of BENCHES) {
      const src = read(`bench/${b}.ts`);
      expect(src, b).toContain('from "./report"');
      expect(src, b).toMatch(/\bsize\(|\bsizes\(/);
      expect(src, b).toMatch(/\breport\(\{/);
    }
  });

  it("is what a full test run requires: the bench tier's two smoke stages", () => {
    const sh = read("scripts/test.sh");
    expect(/^ALL_TIERS=\(([^)]*)\)/m.exec(sh)?.[1].split(" ")).toContain("bench");
    const required = /^\s*stages_require (.*)$/m.exec(sh)?.[1].split(" ") ?? [];
    expect(required).toEqual(expect.arrayContaining(["bench-smoke", "bench-pages"]));
    const docs = read("docs/testing.md");
    for (const stage of ["bench-smoke", "bench-pages"]) expect(docs).toContain(`\`${stage}\``);
    const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
    expect(scripts.bench).toContain("bench/run.ts");
    expect(scripts["bench:smoke"]).toContain("--smoke");
  });
});

describe("bench/report.ts", () => {
  it("sizes a benchmark: its own variable first, then the smoke's size in a smoke, else the full size", async () => {
    vi.stubEnv("BENCH_SMOKE", "");
    vi.stubEnv("BENCH_COUNT", "");
    let r = await import("../bench/report");
    expect(r.size("BENCH_COUNT", 50_000, 2_000)).toBe(50_000);
    vi.resetModules();
    vi.stubEnv("BENCH_SMOKE", "1");
    r = await import("../bench/report");
    expect(r.size("BENCH_COUNT", 50_000, 2_000)).toBe(2_000);
    expect(r.sizes("BENCH_RATES", "100,1000", "100,500")).toEqual(["100", "500"]);
    vi.stubEnv("BENCH_RATES", "250");
    expect(r.sizes("BENCH_RATES", "100,1000", "100,500")).toEqual(["250"]);
    // Set to nothing: no item (BENCH_RATES= skips the rate-limited runs), not the default list.
    vi.stubEnv("BENCH_RATES", "");
    expect(r.sizes("BENCH_RATES", "100,1000", "100,500")).toEqual([]);
    vi.stubEnv("BENCH_COUNT", "7");
    expect(r.size("BENCH_COUNT", 50_000, 2_000)).toBe(7);
  });

  it("appends each row as a JSON line, with the ratio to its anchor and CPU µs per letter", async () => {
    const file = path.join(dir, "rows.jsonl");
    vi.stubEnv("BENCH_REPORT", file);
    vi.stubEnv("BENCH_SMOKE", "1");
    const { report, table } = await import("../bench/report");
    const cpu = {
      node: 0.2,
      gc: 0.02,
      postgres: 0.1,
      postgresBackends: 0.08,
      postgresAll: 0.3,
      broker: 0.05,
      rabbitmq: 0.05,
    };
    report({
      operation: "scan",
      rate: { value: 500, unit: "letters/s" },
      anchor: { name: "bare read", value: 2000, unit: "letters/s" },
      cpu: { reading: cpu, letters: 1000, broker: "rabbitmq" },
    });
    report({ operation: "groups view", rate: { value: 21, unit: "ms" } });
    const rows = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      operation: "scan",
      ratio: 0.25,
      smoke: true,
      letters: 1000,
      cpu: { node: 200, gc: 20, postgres: 100, postgresAll: 300, broker: 50, brokerName: "rabbitmq" },
    });
    expect(rows[1].ratio).toBeUndefined();
    const t = table(rows).split("\n");
    expect(t[1]).toMatch(
      /operation\s+\|\s+rate\s+\|\s+anchor \(same run\)\s+\|\s+ratio\s+\|\s+node \(gc\)\s+\|\s+postgres\s+\|\s+broker\s+\|\s+total/,
    );
    expect(t[3]).toMatch(
      /: scan\s+\|\s+500\/s\s+\|\s+bare read 2,000\/s\s+\|\s+0\.25\s+\|\s+200 \(20\)\s+\|\s+100\s+\|\s+50 rabbitmq\s+\|\s+350$/,
    );
    expect(t[4]).toMatch(/: groups view\s+\|\s+21\.0 ms\s+\|/);
  });
});
