"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { toActionError, AppError, type ActionResult } from "@/lib/errors";
import { triageBase } from "@/lib/triage/view-params";
import { cancelScan, startScan, type ScanView } from "@/lib/triage/use-cases";

const startSchema = z.object({
  connectionId: z.string().min(1).max(100),
  queue: z.string().min(1).max(255),
  acceptRisk: z.boolean().optional(),
});
const cancelSchema = z.object({ jobId: z.string().min(1).max(100) });

/** Queues a scan of the DLQ into the triage index (operator+). Audited `triage.scan_start`. */
export async function startScanAction(
  input: unknown,
): Promise<ActionResult<{ scan: ScanView; alreadyActive: boolean }>> {
  try {
    const actor = await requireActor();
    // Authorize before validating, so a refused caller is refused and audited whatever it sent.
    await authorize(actor, "triage:scan", { action: "triage.scan_start", meta: await requestMeta() });
    const parsed = startSchema.safeParse(input);
    if (!parsed.success) throw new AppError("bad_request:input", { userMessage: "Connection and queue are required." });
    const data = await startScan(actor, await requestMeta(), parsed.data);
    revalidatePath(triageBase(parsed.data.connectionId, parsed.data.queue));
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}

/** Asks a running scan to stop at its next batch. Audited `triage.scan_cancel`. */
export async function cancelScanAction(input: unknown): Promise<ActionResult<ScanView>> {
  try {
    const actor = await requireActor();
    // Authorize before validating, so a refused caller is refused and audited whatever it sent.
    await authorize(actor, "triage:scan", { action: "triage.scan_cancel", meta: await requestMeta() });
    const parsed = cancelSchema.safeParse(input);
    if (!parsed.success) throw new AppError("bad_request:input", { userMessage: "Name the scan to cancel." });
    const data = await cancelScan(actor, await requestMeta(), parsed.data);
    revalidatePath(triageBase(data.connectionId, data.queue));
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
