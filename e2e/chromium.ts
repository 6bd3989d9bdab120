import { devices, type PlaywrightTestConfig } from "@playwright/test";

/** What every e2e config here runs with: one worker (the specs share brokers and a database), no retries. */
export const commonConfig = {
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  timeout: 60_000,
  expect: { timeout: 15_000 },
} satisfies PlaywrightTestConfig;

/** Debian's Chromium (never a downloaded browser), as every e2e config here runs it. */
export const chromiumProject: NonNullable<PlaywrightTestConfig["projects"]>[number] = {
  name: "chromium",
  use: {
    ...devices["Desktop Chrome"],
    viewport: { width: 1280, height: 900 },
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
};
