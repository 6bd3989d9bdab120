"use server";

import { revalidatePath } from "next/cache";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { toSafeError } from "@/lib/dlq/app-error";
import type { ActionResult } from "@/lib/errors";
import { cancelDiscard, planDiscard, startDiscard, type DiscardPreview, type DiscardView } from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";

/**
 * Thin wrappers: the use cases (lib/discard/use-cases.ts) authorize (admin only), validate with
 * zod and audit; these return `{ ok, data | error }` with only the operator-facing message.
 */
async function run<T>(work: (actor: Awaited<ReturnType<typeof requireActor>>, meta: Awaited<ReturnType<typeof requestMeta>>) => Promise<T>, after?: (r: T) => void): Promise<ActionResult<T>> {
  try {
    const data = await work(await requireActor(), await requestMeta());
    after?.(data);
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toSafeError(e) };
  }
}

/** Counts the selection (again). Audited `discard.plan`. */
export async function planDiscardAction(input: unknown): Promise<ActionResult<DiscardPreview>> {
  return run((a, m) => planDiscard(a, m, input));
}

/** Creates the discard job. Needs the reason and the confirmed count. */
export async function startDiscardAction(input: unknown): Promise<ActionResult<DiscardView>> {
  return run((a, m) => startDiscard(a, m, input));
}

export async function cancelDiscardAction(input: unknown): Promise<ActionResult<DiscardView>> {
  return run((a, m) => cancelDiscard(a, m, input), (v) => revalidatePath(discardJobHref(v.connectionId, v.queue, v.id)));
}
