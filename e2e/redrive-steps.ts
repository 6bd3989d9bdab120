import { expect, type Page } from "@playwright/test";

/** Starts a scan on a DLQ's triage page and waits for it to finish. */
export async function scanToDone(page: Page) {
  await page.getByTestId("scan-start").click();
  await expect(page.getByTestId("scan-progress")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
}

/**
 * On the redrive form opened from a group: states the fix and the stages, confirms the count the
 * form names, submits, and returns the job's path and id once its page shows.
 */
export async function startRedrive(
  page: Page,
  o: { count: number; fix: string; sample: number; watchSeconds: number; rate: number },
) {
  const submit = page.getByTestId("redrive-submit");
  await expect(submit).toBeDisabled();
  await page.getByTestId("redrive-fix").fill(o.fix);
  await page.getByTestId("redrive-sample").fill(String(o.sample));
  await page.getByTestId("redrive-watch").fill(String(o.watchSeconds));
  await page.getByTestId("redrive-rate").fill(String(o.rate));
  await expect(page.getByTestId("redrive-stage-summary")).toContainText(`Stage 1 redrives ${o.sample} of ${o.count}`);
  await expect(submit).toBeDisabled();
  await page.getByLabel(`Redrive ${o.count} letters from`).check();
  await expect(submit).toBeEnabled();
  await expect(submit).toContainText(`Redrive ${o.count} letters`);
  await submit.click();
  await expect(page).toHaveURL(/\/redrive\/[0-9a-f-]{36}$/);
  const jobPath = new URL(page.url()).pathname;
  return { jobPath, jobId: jobPath.split("/").pop()! };
}

/** On a job page: waits for the sample's clean verdict. */
export async function awaitCleanVerdict(page: Page, sample: number) {
  await expect(page.getByTestId("verdict-badge")).toHaveText("clean", { timeout: 60_000 });
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-stage", "awaiting_bulk");
  await expect(page.getByTestId("n-redriven")).toHaveAttribute("data-value", String(sample));
}

/** On a job page after a clean verdict: runs the rest and waits for every letter to be moved. */
export async function runRestToEnd(page: Page, count: number) {
  await page.getByTestId("redrive-bulk").click();
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("redrive-bar")).toHaveAttribute("aria-valuenow", "100");
  await expect(page.getByTestId("redrive-settled")).toContainText(`${count} of ${count} letters handled (100%)`);
  await expect(page.getByTestId("n-redriven")).toHaveAttribute("data-value", String(count));
  await expect(page.getByTestId("n-failed")).toHaveAttribute("data-value", "0");
}
