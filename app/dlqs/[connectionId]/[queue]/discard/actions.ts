"use server";

import { revalidatePath } from "next/cache";
import { runAction } from "@/lib/use-case/run-action";
import type { ActionResult } from "@/lib/errors";
import {
  cancelDiscard,
  planDiscard,
  startDiscard,
  type DiscardPreview,
  type DiscardView,
} from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";

/**
 * Thin wrappers: the use cases (lib/discard/use-cases.ts) authorize (admin only), validate with
 * zod and audit; these return `{ ok, data | error }` with only the operator-facing message.
 */

/** Counts the selection (again). Audited `discard.plan`. */
export async function planDiscardAction(input: unknown): Promise<ActionResult<DiscardPreview>> {
  return runAction((a, m) => planDiscard(a, m, input));
}

/**
 * Creates the discard job. Needs the reason and the confirmed count. A DLQ whose reading may cost
 * letters is never read for a discard: the use case refuses it (move the letters to safety first).
 */
export async function startDiscardAction(input: unknown): Promise<ActionResult<DiscardView>> {
  return runAction((a, m) =>
    startDiscard(a, m, typeof input === "object" && input !== null ? { ...input, acceptRisk: false } : input),
  );
}

export async function cancelDiscardAction(input: unknown): Promise<ActionResult<DiscardView>> {
  return runAction(
    (a, m) => cancelDiscard(a, m, input),
    (v) => revalidatePath(discardJobHref(v.connectionId, v.queue, v.id)),
  );
}
