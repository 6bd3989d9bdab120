"use server";

import { requireActor, requestMeta } from "@/lib/auth/session";
import { verifyAudit } from "@/lib/audit-log/use-cases";
import { type ActionResult, toActionError } from "@/lib/errors";

/** Recomputes the audit hash chain (admin). */
export async function verifyAuditAction(): Promise<ActionResult<unknown>> {
  try {
    const actor = await requireActor();
    const data = await verifyAudit(actor, await requestMeta());
    return { ok: true, data: JSON.parse(JSON.stringify(data)) };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
