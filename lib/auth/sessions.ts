import "server-only";
import { getDb } from "@/lib/db";
import { sessionPolicy, type SessionPolicy } from "@/lib/auth/config";

export type SessionEnd = "sign_out" | "idle" | "expired";
export type SessionCheck = { ok: true; touch: boolean } | { ok: false; reason: SessionEnd | "unknown" };

interface SessionState {
  endedAt: Date | null;
  endReason: string | null;
  lastSeenAt: Date;
  expiresAt: Date;
}

/**
 * The server's verdict on a session, whatever its cookie says: refused once signed out, past its
 * absolute expiry, or idle for `idleMs` (measured from last-seen, which lags the last request by
 * less than `touchMs`, so a session can end up to `touchMs` early, never late). `touch` says
 * last-seen is due to be refreshed.
 */
export function checkSession(row: SessionState | null, now: Date, policy: SessionPolicy): SessionCheck {
  if (!row) return { ok: false, reason: "unknown" };
  if (row.endedAt) return { ok: false, reason: (row.endReason as SessionEnd | null) ?? "sign_out" };
  const t = now.getTime();
  if (t >= row.expiresAt.getTime()) return { ok: false, reason: "expired" };
  const quiet = t - row.lastSeenAt.getTime();
  if (quiet >= policy.idleMs) return { ok: false, reason: "idle" };
  return { ok: true, touch: quiet >= policy.touchMs };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A new session row at sign-in; its id goes into the JWT as `sid`. */
export async function createSession(
  input: { userId: string; method: "credentials" | "oidc"; ip?: string | null },
  now = new Date(),
  policy = sessionPolicy(),
): Promise<string> {
  const row = await getDb().authSession.create({
    data: {
      userId: input.userId,
      method: input.method,
      ip: input.ip ?? null,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + policy.maxAgeMs),
    },
    select: { id: true },
  });
  return row.id;
}

/**
 * True when the session `sid` belongs to `userId` and is still live; records its activity (every
 * authenticated page render, server action and route handler calls this through getActor). A
 * session found idle or expired is ended for good, so later activity cannot revive it.
 */
export async function resumeSession(
  sid: string,
  userId: string,
  now = new Date(),
  policy = sessionPolicy(),
): Promise<boolean> {
  if (!UUID_RE.test(sid)) return false;
  const db = getDb();
  const row = await db.authSession.findUnique({ where: { id: sid } });
  if (!row || row.userId !== userId) return false;
  const check = checkSession(row, now, policy);
  if (!check.ok) {
    if (!row.endedAt && check.reason !== "unknown") await endSession(sid, check.reason, now);
    return false;
  }
  if (check.touch) await db.authSession.updateMany({ where: { id: sid, endedAt: null }, data: { lastSeenAt: now } });
  return true;
}

export async function endSession(sid: string, reason: SessionEnd, now = new Date()): Promise<void> {
  if (!UUID_RE.test(sid)) return;
  await getDb().authSession.updateMany({
    where: { id: sid, endedAt: null },
    data: { endedAt: now, endReason: reason },
  });
}
