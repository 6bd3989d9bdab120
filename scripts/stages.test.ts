import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * scripts/sh/stages.sh decides whether a run of the test command is green: a full run must fail when
 * a stage did not run, failed, or counted nothing, and a stage must fail when its runner skipped a
 * test. These run the real shell functions on reports written here.
 */
let dir = "";
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "dlq-stages-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function bash(script: string) {
  const r = spawnSync(
    "bash",
    [
      "-c",
      `set -euo pipefail; source scripts/sh/common.sh; STAGES_DIR=${JSON.stringify(path.join(dir, "run"))}; source scripts/sh/stages.sh; stages_reset; ${script}`,
    ],
    { cwd: path.resolve(import.meta.dirname, ".."), encoding: "utf8" },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const row = (name: string, status: string, count: string) =>
  `printf '%s\\t%s\\t0\\t1\\t%s\\ttests\\n' ${name} ${status} ${count} >> "$STAGES_TSV"`;

describe("stages_require (a full run is green only if every stage ran, passed and counted)", () => {
  it("passes when every named stage passed with a count above zero", () => {
    const r = bash(`${row("unit", "passed", "1000")}; ${row("e2e", "passed", "105")}; stages_require unit e2e`);
    expect(r.status).toBe(0);
  });

  it("fails and names the stage that did not run", () => {
    const r = bash(`${row("unit", "passed", "1000")}; stages_require unit e2e`);
    expect(r.status).toBe(1);
    expect(r.out).toContain("stage e2e did not run");
  });

  it("fails on a stage that ran nothing, or did not pass", () => {
    expect(bash(`${row("e2e", "passed", "0")}; stages_require e2e`).out).toContain("stage e2e counted 0");
    expect(bash(`${row("e2e", "passed", "?")}; stages_require e2e`).status).toBe(1);
    expect(bash(`${row("e2e", "'FAILED(1)'", "3")}; stages_require e2e`).out).toContain("stage e2e did not pass");
  });

  it("prints every stage in the table, in the order they started", () => {
    const r = bash(`${row("lint", "passed", "808")}; ${row("unit", "passed", "1000")}; stages_table`);
    expect(r.out).toMatch(/lint\s+passed.*808[\s\S]*unit\s+passed.*1000[\s\S]*whole run/);
  });
});

describe("vitest_count and playwright reports (a skipped test fails its stage)", () => {
  const report = (o: object) => {
    const f = path.join(dir, "report.json");
    writeFileSync(f, JSON.stringify(o));
    return f;
  };

  it("counts the passed tests of a clean vitest report", () => {
    const f = report({ numPassedTests: 12, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0 });
    const r = bash(
      `STAGE_COUNT_FILE=${JSON.stringify(path.join(dir, "n"))}; vitest_count ${JSON.stringify(f)}; cat "$STAGE_COUNT_FILE"`,
    );
    expect(r.status).toBe(0);
    expect(r.out.trim()).toBe("12");
  });

  it("fails a vitest report with a skipped or todo test, and one that ran nothing", () => {
    const n = JSON.stringify(path.join(dir, "n"));
    for (const bad of [
      { numPassedTests: 12, numFailedTests: 0, numPendingTests: 1, numTodoTests: 0 },
      { numPassedTests: 12, numFailedTests: 0, numPendingTests: 0, numTodoTests: 2 },
      { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0 },
    ]) {
      expect(bash(`STAGE_COUNT_FILE=${n}; vitest_count ${JSON.stringify(report(bad))}`).status).not.toBe(0);
    }
  });
});

describe("playwright_count", () => {
  it("counts a clean Playwright report, and fails one with a skipped, flaky or failed test", () => {
    const n = JSON.stringify(path.join(dir, "n"));
    const write = (stats: object) => {
      const f = path.join(dir, "pw.json");
      writeFileSync(f, JSON.stringify({ stats }));
      return JSON.stringify(f);
    };
    const ok = bash(
      `STAGE_COUNT_FILE=${n}; playwright_count ${write({ expected: 105, skipped: 0, unexpected: 0, flaky: 0 })}; cat "$STAGE_COUNT_FILE"`,
    );
    expect(ok.status).toBe(0);
    expect(ok.out.trim()).toBe("105");
    for (const bad of [
      { expected: 104, skipped: 1, unexpected: 0, flaky: 0 },
      { expected: 104, skipped: 0, unexpected: 0, flaky: 1 },
      { expected: 104, skipped: 0, unexpected: 1, flaky: 0 },
      { expected: 0, skipped: 0, unexpected: 0, flaky: 0 },
    ]) {
      expect(bash(`STAGE_COUNT_FILE=${n}; playwright_count ${write(bad)}`).status).not.toBe(0);
    }
  });
});
