import "server-only";
import { getDb } from "@/lib/db";
import { sessionPolicy, type SessionPolicy } from "@/lib/auth/config";
import { lockEnabledUser } from "@/lib/auth/users";
import type { Prisma } from "@/lib/generated/prisma/client";

/** `user_disabled`: ended by disabling the user (endUserSessions); enabling again never revives it. */
export type SessionEnd = "sign_out" | "idle" | "expired" | "user_disabled";
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

/**
 * A new session row at sign-in; its id goes into the JWT as `sid`. Throws
 * `unauthorized:user-disabled` when the user is disabled by then, including by a disabling that
 * commits while this runs (lockEnabledUser), so no session outlives its user's disabling.
 */
export async function createSession(
  input: { userId: string; method: "credentials" | "oidc"; ip?: string | null },
  now = new Date(),
  policy = sessionPolicy(),
): Promise<string> {
  return getDb().$transaction(async (tx) => {
    await lockEnabledUser(tx, input.userId);
    const row = await tx.authSession.create({
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
  });
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

/**
 * Ends every session of a user not ended yet (`db`: the transaction that disables the user).
 * Returns how many it ended. An ended session is refused for good (resumeSession), so enabling the
 * user again brings none of them back.
 */
export async function endUserSessions(
  userId: string,
  reason: SessionEnd,
  now = new Date(),
  db: Prisma.TransactionClient = getDb(),
): Promise<number> {
  if (!UUID_RE.test(userId)) return 0;
  const { count } = await db.authSession.updateMany({
    where: { userId, endedAt: null },
    data: { endedAt: now, endReason: reason },
  });
  return count;
}
