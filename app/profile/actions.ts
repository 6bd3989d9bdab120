"use server";

import { revalidatePath } from "next/cache";
import type { ActionResult } from "@/lib/errors";
import { createToken, revokeMyToken, type CreateTokenInput, type TokenView } from "@/lib/api-tokens";
import { runAction } from "@/lib/use-case/run-action";

// The use cases authorize (tokens:own) before they validate, so a refused caller is refused and
// audited whatever it sent.

/** Creates a personal API token; the raw token is in this answer only. Audited `token.create`. */
export async function createTokenAction(input: unknown): Promise<ActionResult<{ token: string; view: TokenView }>> {
  return runAction(
    (actor, meta) => createToken(actor, meta, input as CreateTokenInput),
    () => revalidatePath("/profile"),
  );
}

/** Revokes one of the signed-in user's own tokens. Audited `token.revoke`. */
export async function revokeMyTokenAction(input: unknown): Promise<ActionResult<TokenView>> {
  return runAction(
    (actor, meta) => revokeMyToken(actor, meta, input as { id: string }),
    () => revalidatePath("/profile"),
  );
}
