import "server-only";
import { requireActor, requestMeta, type Actor, type RequestMeta } from "@/lib/auth/session";
import { toActionError, type ActionResult } from "@/lib/errors";

/**
 * The body of a thin server action: runs `work` as the signed-in actor (the use case authorizes,
 * validates and audits), then `after` (e.g. revalidatePath) on success. Returns `{ ok, data | error }`
 * with only the operator-facing message.
 */
export async function runAction<T>(
  work: (actor: Actor, meta: RequestMeta) => Promise<T>,
  after?: (r: T) => void,
): Promise<ActionResult<T>> {
  try {
    const data = await work(await requireActor(), await requestMeta());
    after?.(data);
    return { ok: true, data };
  } catch (e) {
    return { ok: false, error: toActionError(e) };
  }
}
