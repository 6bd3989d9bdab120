import "server-only";
import { decode } from "next-auth/jwt";
import { NextResponse } from "next/server";
import { recordAudit } from "@/lib/audit";
import type { ClientIdentity } from "@/lib/auth/client-ip";
import { getUserById } from "@/lib/auth/users";
import { loggableError } from "@/lib/errors";
import { ORIGIN_REFUSED_MESSAGE, type OriginRefusal } from "./origin";

export const ORIGIN_REFUSED_ACTION = "auth.origin_refused";
/** Longest Origin, path or action id kept in the audit row (a client writes them). */
const MAX_KEPT = 200;

/** The user a session cookie names, read without resuming the session (a refusal is no activity). */
async function cookieUser(cookie: string | undefined) {
  if (!cookie) return null;
  const token = await decode({ token: cookie, secret: process.env.NEXTAUTH_SECRET ?? "" }).catch(() => null);
  return typeof token?.sub === "string" ? getUserById(token.sub) : null;
}

export interface RefusedActionRequest {
  /** The page the action was posted to, or the route handler's path. */
  pathname: string;
  method: string;
  origin: string | null;
  /** The Next-Action header: the action's id, when the client router sent it. */
  actionId: string | null;
  /** The session cookie's value, if any. */
  sessionCookie: string | undefined;
  client: Pick<ClientIdentity, "ip" | "requestId" | "clientRequestId">;
}

/**
 * The answer to a server action, or a cookie-session route handler's state change, sent from
 * outside the console's own pages (proxy.ts): 403
 * `forbidden:origin`, before Next runs anything. When a session cookie came with it (the forgery
 * this stops rides on one), the refusal is audited `auth.origin_refused` (denied) under that
 * session's user, with the reason, the Origin, the page and the action id. Without a session there
 * is nobody to act as, and no audit row: an anonymous flood must not write to the audit chain.
 */
export async function refuseForeignRequest(reason: OriginRefusal, req: RefusedActionRequest): Promise<NextResponse> {
  try {
    const user = await cookieUser(req.sessionCookie);
    if (user) {
      await recordAudit({
        actor: { id: user.id, email: user.email, role: user.role },
        action: ORIGIN_REFUSED_ACTION,
        outcome: "denied",
        requestId: req.client.requestId,
        ip: req.client.ip,
        details: {
          reason,
          origin: req.origin ? req.origin.slice(0, MAX_KEPT) : null,
          method: req.method.slice(0, 16),
          path: req.pathname.slice(0, MAX_KEPT),
          actionId: req.actionId?.slice(0, MAX_KEPT) ?? null,
          ...(req.client.clientRequestId ? { clientRequestId: req.client.clientRequestId } : {}),
        },
      });
    }
  } catch (e) {
    // The refusal stands whether or not it could be written down.
    console.error("audit write failed for a refused server action:", loggableError(e));
  }
  return NextResponse.json(
    { ok: false, error: { code: "forbidden:origin", message: ORIGIN_REFUSED_MESSAGE } },
    { status: 403, headers: { "Cache-Control": "no-store" } },
  );
}
