"use server";

import { revalidatePath } from "next/cache";
import type { ActionResult } from "@/lib/errors";
import { revokeAnyToken, type TokenView } from "@/lib/api-tokens";
import { runAction } from "@/lib/use-case/run-action";

/** Revokes any user's token. Needs tokens:manage (checked before the input is read); audited `token.revoke`. */
export async function revokeAnyTokenAction(input: unknown): Promise<ActionResult<TokenView>> {
  return runAction(
    (actor, meta) => revokeAnyToken(actor, meta, input as { id: string }),
    () => revalidatePath("/admin/tokens"),
  );
}
