import "server-only";
import { recordAudit, type AuditEntry } from "@/lib/audit";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { bearerToken, displayPrefix, isWellFormedToken } from "./format";
import { tokenRateLimitError, tokenRatePolicy, type TokenRatePolicy } from "./rate";
import { lowerRole } from "./roles";
import { sameHash, tokenHash } from "./secret";
import { takeTokenRequest } from "./rate-store";
import { markRefused, tokensWithPrefix, touchLastUsed, TOUCH_INTERVAL_MS } from "./store";

export interface BearerActor {
  /** The token's user, with the lower of the token's role and the user's role now, and the token id. */
  actor: Actor & { tokenId: string };
  tokenId: string;
}

export interface BearerOptions {
  now?: Date;
  meta?: RequestMeta;
  policy?: TokenRatePolicy;
  db?: PrismaClient;
  /** Where a refused use of a known token is recorded (tests of another database pass their own). */
  audit?: (entry: AuditEntry) => Promise<unknown>;
}

export type RefusalReason = "expired" | "revoked" | "user_disabled";

/**
 * One answer for a missing, malformed, unknown or revoked token and for a disabled user, so the
 * answer tells someone holding a leaked (and since revoked) token nothing. An expired token is
 * named as such: only the holder of the whole secret, whose HMAC matched a row, ever reads it, and
 * it tells them what to do (make a new one) where the generic answer would send them hunting.
 */
function refused(reason: "unknown" | RefusalReason): AppError {
  const expired = reason === "expired";
  return new AppError("unauthorized:token", {
    message: `API token refused (${reason})`,
    userMessage: expired
      ? "This API token has expired. Create a new one on your profile page."
      : "The API token is not valid. Check that the whole token was sent as 'Authorization: Bearer <token>', or create a new one on your profile page.",
  });
}

/**
 * Resolves `Authorization: Bearer dlqc_…` to the actor the request runs as, or throws
 * `unauthorized:token` (401), or the token rate refusal (lib/api-tokens/rate.ts: the route layer
 * answers 429 with Retry-After).
 *
 * The user is read fresh on every request: a disabled user's tokens stop at once, and a demoted
 * user's tokens act at their new role (never above the token's own). The row is found by the
 * token's display prefix and its HMAC compared in constant time, so the secret itself never meets a
 * database index or a short-circuiting comparison. A refused use of a known token (expired, revoked,
 * user disabled) is recorded as `token.refused`, at most once a minute per token.
 */
export async function actorFromBearer(
  authorization: string | null | undefined,
  opts: BearerOptions = {},
): Promise<BearerActor> {
  const db = opts.db ?? getDb();
  const now = opts.now ?? new Date();
  const token = bearerToken(authorization);
  if (!token || !isWellFormedToken(token)) throw refused("unknown");

  const hash = tokenHash(token);
  let match: Awaited<ReturnType<typeof tokensWithPrefix>>[number] | null = null;
  for (const row of await tokensWithPrefix(displayPrefix(token), db))
    if (sameHash(row.hash, hash) && !match) match = row;
  if (!match) throw refused("unknown");

  const user = await db.user.findUnique({
    where: { id: match.userId },
    select: { id: true, email: true, name: true, role: true, disabled: true },
  });
  const reason: RefusalReason | null = match.revokedAt
    ? "revoked"
    : !user || user.disabled
      ? "user_disabled"
      : match.expiresAt.getTime() <= now.getTime()
        ? "expired"
        : null;
  if (reason) {
    if (await markRefused(match.id, now, db)) {
      await (opts.audit ?? recordAudit)({
        actor: {
          id: match.userId,
          email: user?.email ?? null,
          role: user ? lowerRole(match.role, user.role) : match.role,
        },
        action: "token.refused",
        outcome: "denied",
        target: match.id,
        requestId: opts.meta?.requestId ?? null,
        ip: opts.meta?.ip ?? null,
        details: { tokenId: match.id, name: match.name, prefix: match.prefix, reason },
      });
    }
    throw refused(reason);
  }

  const policy = opts.policy ?? tokenRatePolicy();
  const decision = await takeTokenRequest(match.id, now, policy, db);
  if (decision.limited) throw tokenRateLimitError(decision.retryAfterMs, policy);

  const staleUse = !match.lastUsedAt || now.getTime() - match.lastUsedAt.getTime() >= TOUCH_INTERVAL_MS;
  if (staleUse) await touchLastUsed(match.id, now, db);

  const actor = {
    id: user!.id,
    email: user!.email,
    name: user!.name ?? null,
    role: lowerRole(match.role, user!.role),
    tokenId: match.id,
  };
  return { actor, tokenId: match.id };
}
