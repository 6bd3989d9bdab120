import "server-only";
import { forbidden } from "next/navigation";
import { authorize, type AuthorizeContext } from "@/lib/auth/authorize";
import type { Permission } from "@/lib/auth/permissions";
import type { Actor } from "@/lib/auth/session";
import { asAppError } from "@/lib/errors";

/**
 * For pages a role may be refused: the same check as `authorize()` (a refusal is audited "denied"
 * under `ctx.action`), answered with Next's `forbidden()`, which renders the nearest forbidden.tsx
 * with HTTP 403. The status is only 403 while nothing has streamed yet: call this in the page
 * before any <Suspense>, in a segment that no loading.tsx wraps (next/dist/docs: forbidden.md,
 * loading.md "Status codes").
 */
export async function authorizePage(actor: Actor, permission: Permission, ctx: AuthorizeContext): Promise<void> {
  try {
    await authorize(actor, permission, ctx);
  } catch (e) {
    if (asAppError(e)?.type === "forbidden") forbidden();
    throw e;
  }
}
