"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { toActionError, AppError, type ActionResult } from "@/lib/errors";
import { dlqHref } from "@/lib/dlq/links";
import { readRiskyOnce } from "@/lib/dlq/risky-read";
import { startSafeMove, type SafeMoveView } from "@/lib/safety/use-cases";
import type { ScanView } from "@/lib/triage/use-cases";

const dlqSchema = z.object({ connectionId: z.string().min(1).max(100), queue: z.string().min(1).max(255) });
const moveSchema = dlqSchema.extend({ target: z.string().min(1).max(255) });

/**
 * The operator accepts what reading this DLQ costs, for ONE read: the DLQ is read once into the
 * snapshot its pages are served from. Audited `dlq.read_risky_confirmed` (and the scan it starts).
 */
export async function confirmRiskyReadAction(input: unknown): Promise<ActionResult<{ scan: ScanView }>> {
  try {
    const actor = await requireActor();
    // Authorize before validating, so a refused caller is refused and audited whatever it sent.
    await authorize(actor, "dlq:browse-risky", { action: "dlq.read_risky_confirmed", meta: await requestMeta() });
    const parsed = dlqSchema.safeParse(input);
    if (!parsed.success) throw new AppError("bad_request:input", { userMessage: "Connection and queue are required." });
    const { scan } = await readRiskyOnce(actor, await requestMeta(), parsed.data);
    revalidatePath(dlqHref(parsed.data.connectionId, parsed.data.queue));
    return { ok: true, data: { scan } };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}

/** Moves every letter of this risky DLQ to the safe queue the operator confirmed. Audited `dlq.safe_move_start`. */
export async function startSafeMoveAction(input: unknown): Promise<ActionResult<{ move: SafeMoveView }>> {
  try {
    const actor = await requireActor();
    await authorize(actor, "dlq:safe-move", { action: "dlq.safe_move_start", meta: await requestMeta() });
    const parsed = moveSchema.safeParse(input);
    if (!parsed.success)
      throw new AppError("bad_request:input", { userMessage: "Connection, queue and the safe queue are required." });
    const move = await startSafeMove(actor, await requestMeta(), parsed.data);
    revalidatePath(dlqHref(parsed.data.connectionId, parsed.data.queue));
    return { ok: true, data: { move } };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
