"use server";

import { revalidatePath } from "next/cache";
import type { ActionResult } from "@/lib/errors";
import { acknowledgeFinding } from "@/lib/operations/use-cases";
import { runAction } from "@/lib/use-case/run-action";

// The use case authorizes (ops:acknowledge) before it validates, so a refused caller is refused
// and audited whatever it sent.

/** Marks a finding seen (operators, admins); it stays listed until the fault is fixed. Audited `finding.acknowledge`. */
export async function acknowledgeFindingAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  return runAction(
    (actor, meta) => acknowledgeFinding(actor, meta, input as { id: string }),
    () => revalidatePath("/findings"),
  );
}
