import { defineConfig } from "@playwright/test";
import { chromiumProject, commonConfig } from "./e2e/chromium";

const PORT = Number(process.env.E2E_PORT ?? 3100);
const baseURL = `http://127.0.0.1:${PORT}`;

/** The embedded-database run starts its own servers: e2e/embedded/playwright.config.ts. */
const EMBEDDED = "embedded/**";

/**
 * Specs that must not run at the same time as one another, so their project has one worker (the
 * other worker runs the rest meanwhile):
 * - sqs, ui-sqs and triage read the demo SQS queues, and an SQS read hides the letters it receives
 *   until it releases them: two reads of one queue at once would each see part of it;
 * - masking changes the masking configuration, and a changed configuration (its version) stops the
 *   text search of every scan made before it (lib/triage/masked-search.ts) until a rescan, which
 *   triage and hostile rely on between their scan and their search;
 * - security-review adds (and then removes) a masking rule and triage rules of its own, so it
 *   changes both global configurations the same way.
 */
const ONE_AT_A_TIME = [
  "**/sqs.spec.ts",
  "**/ui-sqs.spec.ts",
  "**/triage.spec.ts",
  "**/masking.spec.ts",
  "**/hostile.spec.ts",
  "**/security-review.spec.ts",
];

/**
 * e2e runs Debian's Chromium (never a downloaded browser) against the production build
 * (`next build` first; scripts/test.sh does it), on the real Postgres and RabbitMQ.
 * scripts/test.sh creates the users and demo dead letters before this runs.
 *
 * Two workers, each running whole spec files (a file's tests stay in order in one worker unless
 * the file says otherwise). Specs name their own queues, topics, users and rules with a run id, so
 * they do not meet; the few that would are kept apart by their project (ONE_AT_A_TIME). The
 * "setup" project signs each role in once (e2e/auth.setup.ts); the rest reuse those sessions.
 */
export default defineConfig({
  testDir: "e2e",
  testIgnore: [EMBEDDED],
  fullyParallel: false,
  ...commonConfig,
  // e2e/chromium.ts's commonConfig keeps the embedded run on one worker.
  workers: 2,
  // Screenshot baselines sit beside their spec (e2e/<spec>-snapshots/), taken in Debian's Chromium
  // on Linux. A run never writes one: a missing baseline fails like a different one. To (re)write
  // them: `npx playwright test --update-snapshots=changed <spec>` (docs/testing.md).
  snapshotPathTemplate: "{testDir}/{testFileName}-snapshots/{arg}{ext}",
  updateSnapshots: "none",
  use: {
    baseURL,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [
    { ...chromiumProject, name: "setup", testMatch: /auth\.setup\.ts$/ },
    {
      ...chromiumProject,
      name: "chromium-one-at-a-time",
      testMatch: ONE_AT_A_TIME,
      dependencies: ["setup"],
      workers: 1,
    },
    {
      ...chromiumProject,
      testIgnore: [EMBEDDED, ...ONE_AT_A_TIME],
      dependencies: ["setup"],
    },
  ],
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
