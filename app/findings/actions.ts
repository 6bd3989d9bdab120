"use server";

import { revalidatePath } from "next/cache";
import type { ActionResult } from "@/lib/errors";
import { acknowledgeFinding, acknowledgeFindingKind } from "@/lib/operations/use-cases";
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

/** Acknowledges every open finding of one kind (operators, admins). One audit row `finding.acknowledge_all` with the count. */
export async function acknowledgeFindingKindAction(
  input: unknown,
): Promise<ActionResult<{ code: string; count: number }>> {
  return runAction(
    (actor, meta) => acknowledgeFindingKind(actor, meta, input as { code: string; connectionId?: string }),
    () => revalidatePath("/findings"),
  );
}
