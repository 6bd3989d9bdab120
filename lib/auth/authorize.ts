import "server-only";
import { recordAudit } from "@/lib/audit";
import { can, type Permission } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";

export interface AuthorizeContext {
  /** The audit action the caller attempted, e.g. "letter.view". */
  action: string;
  connectionId?: string | null;
  queue?: string | null;
  target?: string | null;
  meta?: RequestMeta;
}

/**
 * The server-side check every use case makes before doing anything. A refusal is recorded in the
 * audit log (outcome "denied") and thrown as `forbidden:<permission>`.
 */
export async function authorize(actor: Actor, permission: Permission, ctx: AuthorizeContext): Promise<void> {
  if (can(actor.role, permission)) return;
  await recordAudit({
    actor: { id: actor.id, email: actor.email, role: actor.role, ...(actor.tokenId ? { tokenId: actor.tokenId } : {}) },
    action: ctx.action,
    outcome: "denied",
    connectionId: ctx.connectionId ?? null,
    queue: ctx.queue ?? null,
    target: ctx.target ?? null,
    requestId: ctx.meta?.requestId ?? null,
    ip: ctx.meta?.ip ?? null,
    details: {
      permission,
      ...(ctx.meta?.clientRequestId ? { clientRequestId: ctx.meta.clientRequestId } : {}),
    },
  });
  throw new AppError(`forbidden:${permission}`, {
    message: `${actor.email} (${actor.role}) lacks ${permission} for ${ctx.action}`,
    userMessage: `Your role (${actor.role}) does not allow this. Ask an admin if you need it.`,
  });
}

/** For hiding controls only; never the check. */
export function canActor(actor: Actor | null, permission: Permission): boolean {
  return can(actor?.role, permission);
}
