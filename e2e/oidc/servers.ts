import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

/**
 * For e2e/oidc.spec.ts: the test identity provider (scripts/oidc-test-idp.ts) and a second console
 * server configured for it, on their own loopback ports, both started by the spec and stopped after
 * it. The main Playwright server stays as it is (credentials only), so the other specs are unaffected.
 */
const root = path.resolve(__dirname, "../..");
const base = Number(process.env.E2E_PORT ?? 3100);
export const OIDC_CONSOLE_PORT = Number(process.env.E2E_OIDC_CONSOLE_PORT ?? base + 1);
export const OIDC_IDP_PORT = Number(process.env.E2E_OIDC_IDP_PORT ?? base + 2);
export const OIDC_CONSOLE_URL = `http://127.0.0.1:${OIDC_CONSOLE_PORT}`;
export const OIDC_IDP_URL = `http://127.0.0.1:${OIDC_IDP_PORT}`;
export const OIDC_NAME = "Test IdP";

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv, label: string): ChildProcess {
  // Own process group, so stopping it stops `next start`'s children too.
  const child = spawn(cmd, args, { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const log = (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) if (line.trim()) console.log(`[${label}] ${line}`);
  };
  child.stdout?.on("data", log);
  child.stderr?.on("data", log);
  return child;
}

async function waitFor(url: string, child: ChildProcess, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

function stop(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || !child.pid) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* gone */
      }
      resolve();
    }, 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}

export async function startOidcServers(): Promise<() => Promise<void>> {
  const idp = start(
    process.execPath,
    [
      path.join(root, "node_modules/tsx/dist/cli.mjs"),
      "scripts/oidc-test-idp.ts",
      "--port",
      String(OIDC_IDP_PORT),
      "--redirect",
      `${OIDC_CONSOLE_URL}/api/auth/callback/oidc`,
    ],
    { ...process.env },
    "test-idp",
  );
  let consoleServer: ChildProcess | null = null;
  try {
    await waitFor(`${OIDC_IDP_URL}/.well-known/openid-configuration`, idp, 30_000);
    consoleServer = start(
      process.execPath,
      [
        path.join(root, "node_modules/next/dist/bin/next"),
        "start",
        "--hostname",
        "127.0.0.1",
        "--port",
        String(OIDC_CONSOLE_PORT),
      ],
      {
        ...process.env,
        NEXTAUTH_URL: OIDC_CONSOLE_URL,
        NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? "e2e-secret-not-for-production-0123456789abcdef",
        NEXT_TELEMETRY_DISABLED: "1",
        NEXT_MANUAL_SIG_HANDLE: "true",
        DATABASE_URL: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e",
        DLQ_CONSOLE_CONFIG: process.env.DLQ_CONSOLE_CONFIG ?? "e2e/dlq-console.e2e.config.json",
        DLQ_OIDC_ISSUER: OIDC_IDP_URL,
        DLQ_OIDC_CLIENT_ID: "dlq-console-e2e",
        DLQ_OIDC_CLIENT_SECRET: "test-only-client-secret-0123456789",
        DLQ_OIDC_NAME: OIDC_NAME,
        DLQ_OIDC_SCOPE: "openid email profile groups",
        DLQ_OIDC_ROLES_CLAIM: "groups",
        DLQ_OIDC_ROLE_MAP: "dlq-admins:admin,dlq-operators:operator,dlq-viewers:viewer",
      },
      "oidc-console",
    );
    await waitFor(`${OIDC_CONSOLE_URL}/api/ready`, consoleServer, 120_000);
  } catch (e) {
    await Promise.all([stop(consoleServer), stop(idp)]);
    throw e;
  }
  return async () => {
    await stop(consoleServer);
    await stop(idp);
  };
}
