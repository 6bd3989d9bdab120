"use server";

import { revalidatePath } from "next/cache";
import type { ActionResult } from "@/lib/errors";
import { deleteOwner, saveOwner, type ownerSchema } from "@/lib/operations/use-cases";
import { runAction } from "@/lib/use-case/run-action";
import type { z } from "zod";

// The use cases authorize (ops:manage) before they validate, so a refused caller is refused and
// audited whatever it sent.

/** Adds an owner entry, or changes one (with `id`), including its position. Audited `owner.save`. */
export async function saveOwnerAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  return runAction(
    (actor, meta) => saveOwner(actor, meta, input as z.input<typeof ownerSchema>),
    () => revalidatePath("/owners"),
  );
}

/** Deletes a console owner entry (config entries cannot be deleted here). Audited `owner.delete`. */
export async function deleteOwnerAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  return runAction(
    (actor, meta) => deleteOwner(actor, meta, input as { id: string }),
    () => revalidatePath("/owners"),
  );
}
