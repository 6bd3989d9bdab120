"use server";

import { requireActor, requestMeta } from "@/lib/auth/session";
import { type ActionResult, toActionError } from "@/lib/errors";
import {
  planRepair,
  repairLetter,
  type PlanRepairInput,
  type RepairLetterInput,
  type RepairPlan,
  type RepairResult,
} from "@/lib/repair/use-cases";

/*
 * Repair and resubmit one letter. Whatever arrives goes to the use case as it is: it
 * authorizes (letter:repair) before it validates, so a refusal is audited whatever was sent, and
 * it checks the config switch and the locked fields itself. Nothing is revalidated: the page shows
 * the answer, and the letter's own page reads the broker afresh.
 */

/** The preview: problems (JSON errors with line and column), the masked diff and the target. Sends nothing. */
export async function planRepairAction(input: unknown): Promise<ActionResult<RepairPlan>> {
  try {
    const actor = await requireActor();
    return { ok: true, data: await planRepair(actor, await requestMeta(), (input ?? {}) as PlanRepairInput) };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}

/** Sends the repaired copy; the original is archived, then removed, only after the broker confirmed the copy. */
export async function repairLetterAction(input: unknown): Promise<ActionResult<RepairResult>> {
  try {
    const actor = await requireActor();
    return { ok: true, data: await repairLetter(actor, await requestMeta(), (input ?? {}) as RepairLetterInput) };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
