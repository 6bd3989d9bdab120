"use server";

import { revalidatePath } from "next/cache";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { type ActionResult, toActionError } from "@/lib/errors";
import { createUserAsAdmin, updateUserAsAdmin } from "@/lib/users-admin";

// Input validation (zod) happens inside the use cases, after authorization, so that a refused
// caller is audited whatever it sent.

export async function createUserAction(input: unknown): Promise<ActionResult<{ id: string; email: string }>> {
  try {
    const actor = await requireActor();
    const u = await createUserAsAdmin(actor, await requestMeta(), input as never);
    revalidatePath("/admin/users");
    return { ok: true, data: { id: u.id, email: u.email } };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}

export async function updateUserAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  try {
    const actor = await requireActor();
    const u = await updateUserAsAdmin(actor, await requestMeta(), input as never);
    revalidatePath("/admin/users");
    return { ok: true, data: { id: u.id } };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
