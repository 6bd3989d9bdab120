import "server-only";
import { cache } from "react";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { cookies } from "next/headers";
import { decode } from "next-auth/jwt";
import { sessionCookieName } from "@/lib/auth/config";
import { clientIdentity } from "@/lib/auth/client-ip";
import { resumeSession } from "@/lib/auth/sessions";
import { getUserById } from "@/lib/auth/users";
import type { Role } from "@/lib/auth/permissions";
import { AppError } from "@/lib/errors";

export interface Actor {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  /** Set when the request authenticated with a personal API token (lib/api-tokens): audit rows name it. */
  tokenId?: string;
}

export interface RequestMeta {
  requestId: string;
  ip: string | null;
  /** An X-Request-Id sent by a client that is not a trusted proxy: recorded in details, never as requestId. */
  clientRequestId?: string | null;
}

/**
 * The signed-in user as the database knows them now, or null. The session cookie (a JWT signed and
 * encrypted with NEXTAUTH_SECRET) only names the user and the session row; that row must be live
 * (not signed out, idle or expired: lib/auth/sessions.ts, which also records this request as
 * activity), and role and disabled state are read fresh, so revoking access needs no session purge.
 */
export const getActor = cache(async (): Promise<Actor | null> => {
  const raw = (await cookies()).get(sessionCookieName())?.value;
  if (!raw) return null;
  const token = await decode({ token: raw, secret: process.env.NEXTAUTH_SECRET ?? "" }).catch(() => null);
  const id = typeof token?.sub === "string" ? token.sub : null;
  const sid = typeof token?.sid === "string" ? token.sid : null;
  if (!id || !sid) return null;
  if (!(await resumeSession(sid, id))) return null;
  const user = await getUserById(id);
  if (!user || user.disabled) return null;
  return { id: user.id, email: user.email, name: user.name ?? null, role: user.role };
});

/** For pages: the actor, or a redirect to sign-in that comes back here. */
export async function requirePageActor(callbackPath?: string): Promise<Actor> {
  const actor = await getActor();
  if (!actor) {
    const back = callbackPath ?? (await headers()).get("x-pathname") ?? "/";
    redirect(`/signin?callbackUrl=${encodeURIComponent(back)}`);
  }
  return actor;
}

/** For actions and route handlers: the actor, or `unauthorized:session`. */
export async function requireActor(): Promise<Actor> {
  const actor = await getActor();
  if (!actor) throw new AppError("unauthorized:session", { userMessage: "Your session has ended. Sign in again." });
  return actor;
}

/**
 * Request id and client address for the audit log: a trusted proxy's word (DLQ_TRUSTED_PROXIES),
 * else the socket's peer and the id proxy.ts made (lib/auth/client-ip.ts).
 */
export const requestMeta = cache(async (): Promise<RequestMeta> => {
  const { requestId, ip, clientRequestId } = clientIdentity(await headers());
  return { requestId, ip, clientRequestId };
});
