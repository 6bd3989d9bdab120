/**
 * The Node options the console runs with (scripts/console-node-options, which scripts/start.sh
 * reads), for benchmarks that measure the console's code: its young generation is capped there,
 * and a redrive under V8's own sizing spent 11–13 µs a letter in gc where the console spends
 * 17–23 (docs/benchmarks.md, 2026-12-07). A figure measured without them is not the console's.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");

export function consoleNodeOptions(root = ROOT): string[] {
  return readFileSync(path.join(root, "scripts", "console-node-options"), "utf8")
    .split("\n")
    .filter((line) => line.trim() && !line.startsWith("#"))
    .flatMap((line) => line.trim().split(/\s+/));
}

/** NODE_OPTIONS for a process that runs as the console does: the console's options, then yours (they win). */
export function nodeOptionsAsConsole(extra: string[] = []): string {
  return [...consoleNodeOptions(), process.env.NODE_OPTIONS ?? "", ...extra].join(" ").trim();
}

/**
 * Runs `file` (a bench, relative to the repository) again in a child process with the console's
 * Node options, unless this process is that child: resolves true in the parent once the child has
 * ended (its exit code is this process's), false in the child, which goes on with the bench. The
 * child shares the process group, so a runner that stops the group stops it too.
 */
export function asConsole(file: string): Promise<boolean> {
  if (process.env.BENCH_AS_CONSOLE === "1") return Promise.resolve(false);
  const tsx = path.join(ROOT, "node_modules", ".bin", "tsx");
  const child = spawn(tsx, ["--conditions=react-server", file], {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, BENCH_AS_CONSOLE: "1", NODE_OPTIONS: nodeOptionsAsConsole() },
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      process.exitCode = code ?? (signal ? 1 : 0);
      resolve(true);
    });
  });
}
