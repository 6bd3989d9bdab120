import { defineConfig } from "@playwright/test";
import { chromiumProject, commonConfig } from "./e2e/chromium";

const PORT = Number(process.env.E2E_PORT ?? 3100);
const baseURL = `http://127.0.0.1:${PORT}`;

/**
 * e2e runs Debian's Chromium (never a downloaded browser) against the production build
 * (`next build` first; scripts/test.sh does it), on the real Postgres and RabbitMQ.
 * e2e/prepare.ts creates the users and demo dead letters before this runs.
 */
export default defineConfig({
  testDir: "e2e",
  // The embedded-database run starts its own servers: e2e/embedded/playwright.config.ts.
  testIgnore: ["embedded/**"],
  fullyParallel: false,
  ...commonConfig,
  use: {
    baseURL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [chromiumProject],
  webServer: {
    command: `node node_modules/next/dist/bin/next start --hostname 127.0.0.1 --port ${PORT}`,
    url: `${baseURL}/api/ready`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "pipe",
    stderr: "pipe",
    env: {
      NEXTAUTH_URL: baseURL,
      NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? "e2e-secret-not-for-production-0123456789abcdef",
      NEXT_TELEMETRY_DISABLED: "1",
      NEXT_MANUAL_SIG_HANDLE: "true",
      DATABASE_URL: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e",
      DLQ_CONSOLE_CONFIG: process.env.DLQ_CONSOLE_CONFIG ?? "e2e/dlq-console.e2e.config.json",
      // The tests stand where a reverse proxy on loopback would: their X-Forwarded-For and
      // X-Request-Id are believed (lib/auth/client-ip.ts; the untrusted case has its own tests).
      DLQ_TRUSTED_PROXIES: "127.0.0.1, ::1",
    },
  },
});
