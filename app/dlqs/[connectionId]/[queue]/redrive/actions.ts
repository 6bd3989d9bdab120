"use server";

import { revalidatePath } from "next/cache";
import { runAction } from "@/lib/use-case/run-action";
import type { ActionResult } from "@/lib/errors";
import {
  cancelRedrive,
  pauseRedrive,
  planRedrive,
  resumeRedrive,
  startBulk,
  startRedrive,
  type RedrivePreview,
  type RedriveView,
} from "@/lib/redrive/use-cases";
import { redriveJobHref } from "@/lib/redrive/ui-links";

/**
 * Thin wrappers: the use cases (lib/redrive/use-cases.ts) authorize, validate with zod and audit;
 * these return `{ ok, data | error }` with only the operator-facing message.
 */

const revalidate = (v: RedriveView) => revalidatePath(redriveJobHref(v.connectionId, v.queue, v.id));

/** Counts the selection again (after a stale count). Audited `redrive.plan`. */
export async function planRedriveAction(input: unknown): Promise<ActionResult<RedrivePreview>> {
  return runAction((a, m) => planRedrive(a, m, input));
}

/** Creates the job and starts stage 1 (the sample). Needs the fix and the confirmed count. */
export async function startRedriveAction(input: unknown): Promise<ActionResult<RedriveView>> {
  return runAction((a, m) => startRedrive(a, m, input));
}

/**
 * Stage 2; `overrideReason` only for an admin after sample letters came back, `continueAnywayReason`
 * after an inconclusive sample (startBulk enforces both and audits them).
 */
export async function startBulkAction(input: unknown): Promise<ActionResult<RedriveView>> {
  return runAction((a, m) => startBulk(a, m, input), revalidate);
}

export async function pauseRedriveAction(input: unknown): Promise<ActionResult<RedriveView>> {
  return runAction((a, m) => pauseRedrive(a, m, input), revalidate);
}

export async function resumeRedriveAction(input: unknown): Promise<ActionResult<RedriveView>> {
  return runAction((a, m) => resumeRedrive(a, m, input), revalidate);
}

export async function cancelRedriveAction(input: unknown): Promise<ActionResult<RedriveView>> {
  return runAction((a, m) => cancelRedrive(a, m, input), revalidate);
}
