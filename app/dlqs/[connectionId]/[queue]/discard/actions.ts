"use server";

import { revalidatePath } from "next/cache";
import { runAction } from "@/lib/auth/run-action";
import type { ActionResult } from "@/lib/errors";
import { cancelDiscard, planDiscard, startDiscard, type DiscardPreview, type DiscardView } from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";
import { hasRiskConfirmation } from "@/lib/dlq/risk-cookie";

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
 * letters is read with acceptRisk only when the risky read was confirmed on its page (the cookie),
 * never on the client's word; the use case authorizes and records it.
 */
export async function startDiscardAction(input: unknown): Promise<ActionResult<DiscardView>> {
  return runAction(async (a, m) => {
    const raw = (input ?? {}) as Record<string, unknown>;
    const dlq = typeof raw.connectionId === "string" && typeof raw.queue === "string" ? { connectionId: raw.connectionId, queue: raw.queue } : null;
    const acceptRisk = dlq ? await hasRiskConfirmation(dlq.connectionId, dlq.queue) : false;
    return startDiscard(a, m, typeof input === "object" && input !== null ? { ...input, acceptRisk } : input);
  });
}

export async function cancelDiscardAction(input: unknown): Promise<ActionResult<DiscardView>> {
  return runAction((a, m) => cancelDiscard(a, m, input), (v) => revalidatePath(discardJobHref(v.connectionId, v.queue, v.id)));
}
