"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { dlqHref } from "@/lib/dlq/links";
import { rememberRiskConfirmation } from "@/lib/dlq/risk-cookie";
import { confirmRiskyRead } from "@/lib/dlq/risky-read";
import { AppError, type ActionResult } from "@/lib/errors";
import { toSafeError } from "@/lib/dlq/app-error";

const confirmSchema = z.object({ connectionId: z.string().min(1).max(100), queue: z.string().min(1).max(255) });

/** The operator accepts that reading this DLQ may cost letters. Audited `dlq.read_risky_confirmed`. */
export async function confirmRiskyReadAction(input: unknown): Promise<ActionResult<{ expiresAt: string }>> {
  try {
    const actor = await requireActor();
    // Authorize before validating, so a refused caller is refused and audited whatever it sent.
    await authorize(actor, "dlq:browse-risky", { action: "dlq.read_risky_confirmed", meta: await requestMeta() });
    const parsed = confirmSchema.safeParse(input);
    if (!parsed.success) throw new AppError("bad_request:input", { userMessage: "Connection and queue are required." });
    const data = await confirmRiskyRead(actor, await requestMeta(), parsed.data);
    await rememberRiskConfirmation(parsed.data.connectionId, parsed.data.queue);
    revalidatePath(dlqHref(parsed.data.connectionId, parsed.data.queue));
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toSafeError(e) };
  }
}
