import { defineConfig } from "@playwright/test";
import { chromiumProject } from "../chromium";

/**
 * The embedded-database run: its spec starts the console itself with `./scripts/start.sh` on a
 * fresh PGlite folder (no DATABASE_URL), stops it with SIGTERM and starts it again, so there is no
 * webServer here. Needs the production build (`next build`) and the local brokers running.
 */
export default defineConfig({
  testDir: ".",
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  timeout: 60_000,
  expect: { timeout: 15_000 },
  use: { trace: "retain-on-failure", screenshot: "only-on-failure" },
  projects: [chromiumProject],
});
