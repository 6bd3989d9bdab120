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

/** What the look at one target the sample went to found (`data-evidence` on its evidence row). */
export type Evidence = { target: string; state: "taken" | "waiting" | "no_reader" | "unknown"; text?: string };

/**
 * On a job page: waits for the sample's verdict to be inconclusive (none came back, but nothing shows a
 * reader took them), with exactly the evidence rows given, and the job waiting for the operator's
 * go-ahead after `sample` letters: the plain start of the rest is refused, continuing anyway is offered.
 */
export async function awaitInconclusiveVerdict(page: Page, sample: number, evidence: Evidence[]) {
  await expect(page.getByTestId("verdict-badge")).toHaveText("inconclusive", { timeout: 60_000 });
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-stage", "awaiting_bulk");
  await expect(page.getByTestId("n-redriven")).toHaveAttribute("data-value", String(sample));
  await expect(page.getByTestId("verdict-words")).toContainText("nothing shows a reader took them");
  const rows = page.getByTestId("evidence-row");
  await expect(rows).toHaveCount(evidence.length);
  for (const e of evidence) {
    const row = page.locator(`[data-testid="evidence-row"][data-target="${e.target}"]`);
    await expect(row).toHaveAttribute("data-evidence", e.state);
    if (e.text) await expect(row).toContainText(e.text);
  }
  await expect(page.getByTestId("redrive-state")).toHaveText("Awaiting go-ahead · sample inconclusive");
  await expect(page.getByTestId("redrive-bulk")).toBeDisabled();
  await expect(page.getByTestId("redrive-continue-start")).toBeDisabled();
}

/**
 * On a job page after an inconclusive verdict: continues anyway with a reason (recorded on the page
 * with the operator's name) and waits for every one of `count` letters to be moved.
 */
export async function continueAnywayToEnd(page: Page, count: number, o: { reason: string; by: string }) {
  await page.getByTestId("continue-reason").fill(o.reason);
  await page.getByTestId("redrive-continue-start").click();
  await expect(page.getByTestId("redrive-anyway-reason")).toContainText(`Continued anyway by ${o.by}: “${o.reason}”`);
  await expect(page.getByTestId("redrive-job")).toHaveAttribute("data-state", "succeeded", { timeout: 60_000 });
  await expect(page.getByTestId("redrive-bar")).toHaveAttribute("aria-valuenow", "100");
  await expect(page.getByTestId("redrive-settled")).toContainText(`${count} of ${count} letters handled (100%)`);
  await expect(page.getByTestId("n-redriven")).toHaveAttribute("data-value", String(count));
  await expect(page.getByTestId("n-failed")).toHaveAttribute("data-value", "0");
}
