"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { toActionError, AppError, type ActionResult } from "@/lib/errors";
import { saveRules } from "@/lib/triage/use-cases";
import type { RuleSet } from "@/lib/triage/rules-store";

// The rules themselves are checked by validateRules in the use case; this only bounds the envelope.
const saveSchema = z.object({ rules: z.array(z.unknown()).max(500), expectedVersion: z.number().int().min(0) });

/** Replaces the classification rules (admin). Audited `triage.rules_save`; a concurrent edit is a conflict. */
export async function saveRulesAction(input: unknown): Promise<ActionResult<RuleSet>> {
  try {
    const actor = await requireActor();
    // Authorize before validating, so a refused caller is refused and audited whatever it sent.
    await authorize(actor, "triage:rules", { action: "triage.rules_save", meta: await requestMeta() });
    const parsed = saveSchema.safeParse(input);
    if (!parsed.success)
      throw new AppError("bad_request:input", { userMessage: "Send the list of rules and the version you edited." });
    const data = await saveRules(actor, await requestMeta(), parsed.data);
    revalidatePath("/admin/triage-rules");
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
