import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

const REPO = path.resolve(__dirname, "../..");

/**
 * The environment of a new user's shell running `./scripts/start.sh`: no DATABASE_URL (so the
 * embedded PGlite database), no config file (so the default local brokers), and no CI (a user's
 * shell has none; with it start.sh would reinstall node_modules under the running tests).
 */
export function newcomerEnv(dataDir: string, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DLQ_CONSOLE_DATA_DIR: dataDir, PORT: String(port), ...extra };
  for (const k of ["DATABASE_URL", "DLQ_CONSOLE_CONFIG", "CI", "NEXTAUTH_URL", "NEXTAUTH_SECRET"]) delete env[k];
  return env;
}

/** `./scripts/start.sh` to completion, for what it refuses: exit code and everything it printed. */
export function runStartScript(env: NodeJS.ProcessEnv) {
  const r = spawnSync("bash", ["scripts/start.sh"], { cwd: REPO, env, encoding: "utf8", timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Runs an npm script of the repository with the given environment (e.g. audit:verify). */
export function runNpm(script: string, env: NodeJS.ProcessEnv) {
  const r = spawnSync("npm", ["run", "--silent", script], { cwd: REPO, env, encoding: "utf8", timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** The accounts start.sh printed and kept beside the database: email → password. */
export function firstUsers(
  dataDir: string,
): Record<"admin" | "operator" | "viewer", { email: string; password: string }> {
  const lines = readFileSync(path.join(path.dirname(dataDir), "first-users.txt"), "utf8")
    .trim()
    .split("\n");
  const byRole = Object.fromEntries(
    lines.map((l) => {
      const [email, password] = l.trim().split(/\s+/);
      return [email.split("@")[0], { email, password }];
    }),
  );
  return byRole as ReturnType<typeof firstUsers>;
}

/** A console started by `./scripts/start.sh` (which execs the server, so its pid is the server's). */
export class ConsoleProcess {
  private output = "";
  private exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.on("data", (d) => (this.output += String(d)));
    child.stderr!.on("data", (d) => (this.output += String(d)));
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  static async start(env: NodeJS.ProcessEnv, baseURL: string, timeoutMs = 300_000): Promise<ConsoleProcess> {
    const child = spawn("bash", ["scripts/start.sh"], { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
    const c = new ConsoleProcess(child);
    const deadline = Date.now() + timeoutMs;
    let exitCode: number | null | undefined;
    void c.exited.then((code) => (exitCode = code));
    while (Date.now() < deadline) {
      if (exitCode !== undefined)
        throw new Error(`start.sh exited with ${exitCode} before the console answered:\n${c.output}`);
      const ok = await fetch(`${baseURL}/api/ready`).then(
        (r) => r.status < 500,
        () => false,
      );
      if (ok) return c;
      await new Promise((r) => setTimeout(r, 500));
    }
    c.child.kill("SIGKILL");
    throw new Error(`the console did not answer at ${baseURL} within ${timeoutMs / 1000} s:\n${c.output}`);
  }

  get log() {
    return this.output;
  }

  /** SIGTERM, as Ctrl-C or a service manager would; resolves to the exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill("SIGTERM");
    return this.exited;
  }
}
