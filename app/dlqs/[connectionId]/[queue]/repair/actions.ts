"use server";

import { authorize } from "@/lib/auth/authorize";
import type { ActionResult } from "@/lib/errors";
import { AppError } from "@/lib/errors";
import { assertGroupRepairUnmasked, previewGroupRepair, type GroupRepairPreview } from "@/lib/redrive/repair-preview";
import { startRedrive, type RedriveView } from "@/lib/redrive/use-cases";
import { runAction } from "@/lib/use-case/run-action";

/*
 * Group repair: one patch over the letters of a group, previewed letter by letter and
 * then started as a redrive that repairs. The use cases authorize, validate and audit.
 */

/** The patch tried on every letter of the selection (nothing moves). Audited `redrive.repair_preview`. */
export async function previewGroupRepairAction(input: unknown): Promise<ActionResult<GroupRepairPreview>> {
  return runAction((a, m) => previewGroupRepair(a, m, input));
}

/**
 * Starts the repairing redrive (stage 1, the sample). startRedrive checks redrive:sample first and
 * letter:repair only once the input parses; this action is only ever a repair, so letter:repair is
 * asked first, under the same audit action, and a refused operator is refused whatever they sent.
 * A start without a repair is refused: a plain redrive has its own form. A patch that tests or
 * changes a value masking hides from the actor is refused as its preview refuses it (audited).
 */
export async function startGroupRepairAction(input: unknown): Promise<ActionResult<RedriveView>> {
  return runAction(async (a, m) => {
    const raw = (input ?? {}) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === "string" ? v : null);
    await authorize(a, "letter:repair", {
      action: "redrive.start",
      connectionId: str(raw.connectionId),
      queue: str(raw.queue),
      meta: m,
    });
    if (raw.repair === undefined || raw.repair === null) {
      throw new AppError("bad_request:repair", {
        userMessage: "A group repair needs the patch and the reason; nothing was started.",
      });
    }
    await assertGroupRepairUnmasked(a, m, input);
    return startRedrive(a, m, input);
  });
}
