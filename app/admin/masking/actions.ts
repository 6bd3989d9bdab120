"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { toActionError, AppError, type ActionResult } from "@/lib/errors";
import type { MaskingConfig } from "@/lib/masking/store";
import { saveMaskingRules } from "@/lib/masking/use-cases";

// The rules and patterns are validated by the use case; this only bounds the envelope.
const saveSchema = z.object({
  rules: z.array(z.unknown()).max(200),
  sensitive: z.array(z.unknown()).max(500),
  expectedVersion: z.number().int().min(0),
});

/** Saves a new version of the masking rules and sensitive DLQs (masking:manage). Audited `masking.save`. */
export async function saveMaskingRulesAction(input: unknown): Promise<ActionResult<MaskingConfig>> {
  try {
    const actor = await requireActor();
    // Authorize before validating, so a refused caller is refused and audited whatever it sent.
    await authorize(actor, "masking:manage", { action: "masking.save", meta: await requestMeta() });
    const parsed = saveSchema.safeParse(input);
    if (!parsed.success)
      throw new AppError("bad_request:input", {
        userMessage: "Send the rules, the sensitive DLQs and the version you edited.",
      });
    const data = await saveMaskingRules(actor, await requestMeta(), parsed.data);
    revalidatePath("/admin/masking");
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
