"use server";

import { revalidatePath } from "next/cache";
import { restoreArchived, type RestoreResult } from "@/lib/discard/undo";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { toActionError, type ActionResult } from "@/lib/errors";

/** Undo: re-publishes the chosen archived letters to their DLQ, with a reason (admin; audited per letter). */
export async function restoreArchivedAction(input: unknown): Promise<ActionResult<RestoreResult>> {
  try {
    const data = await restoreArchived(await requireActor(), await requestMeta(), input);
    revalidatePath("/archive");
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
