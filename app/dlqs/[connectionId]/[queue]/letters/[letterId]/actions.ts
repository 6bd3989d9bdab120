"use server";

import { requireActor, requestMeta } from "@/lib/auth/session";
import { toActionError, type ActionResult } from "@/lib/errors";
import { revealPayload, type RevealedLetter } from "@/lib/dlq/reveal-payload";

/**
 * Reveals a letter's unmasked payload and headers (payload:reveal, with a reason). Audited
 * `payload.reveal`. The answer lives only in the calling component's state: no revalidation, no
 * cookie, nothing cached, so it is gone on navigation or reload.
 */
export async function revealPayloadAction(input: unknown): Promise<ActionResult<RevealedLetter>> {
  try {
    const actor = await requireActor();
    // Anything goes to the use case, which authorizes before it validates (refusals are audited whatever was sent).
    const i = (input && typeof input === "object" ? input : {}) as {
      connectionId?: unknown;
      queue?: unknown;
      letterId?: unknown;
      reason?: unknown;
    };
    const [connectionId, queue] = [String(i.connectionId ?? ""), String(i.queue ?? "")];
    const data = await revealPayload(actor, await requestMeta(), {
      connectionId,
      queue,
      letterId: String(i.letterId ?? ""),
      reason: String(i.reason ?? ""),
    });
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
