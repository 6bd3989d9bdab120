"use server";

import type { ActionResult } from "@/lib/errors";
import { cancelSkip, planSkip, startSkip, type SkipPlan, type SkipView } from "@/lib/consumer-groups/skip";
import { runAction } from "@/lib/use-case/run-action";

/**
 * Thin wrappers: the use cases (lib/consumer-groups/skip.ts) authorize (groups:skip, admins),
 * validate with zod and audit; these return `{ ok, data | error }` with the operator's words only.
 */

/** What skipping would do now: the records and their count, the DLT, the group's members. Audited `group.skip_plan`. */
export async function planSkipAction(input: unknown): Promise<ActionResult<SkipPlan>> {
  return runAction((a, m) => planSkip(a, m, input));
}

/** Starts the skip job (copies first, then the offset), with the confirmed count and a reason. Audited `group.skip`. */
export async function startSkipAction(input: unknown): Promise<ActionResult<SkipView>> {
  return runAction((a, m) => startSkip(a, m, input));
}

/** Cancels a skip that has not moved the offset yet (a waiting one copies nothing). Audited `group.skip_cancel`. */
export async function cancelSkipAction(input: unknown): Promise<ActionResult<SkipView>> {
  return runAction((a, m) => cancelSkip(a, m, input));
}
