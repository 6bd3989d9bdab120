import { defineConfig } from "@playwright/test";
import { chromiumProject, commonConfig } from "../chromium";

/**
 * The embedded-database run: its spec starts the console itself with `./scripts/start.sh` on a
 * fresh PGlite folder (no DATABASE_URL), stops it with SIGTERM and starts it again, so there is no
 * webServer here. Needs the production build (`next build`) and the local brokers running.
 */
export default defineConfig({
  testDir: ".",
  ...commonConfig,
  use: { trace: "retain-on-failure", screenshot: "only-on-failure" },
  projects: [chromiumProject],
});
