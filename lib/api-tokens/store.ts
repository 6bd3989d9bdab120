import "server-only";
import { getDb } from "@/lib/db";
import type { Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import type { Role } from "@/lib/auth/permissions";
import { lockEnabledUser } from "@/lib/auth/users";
import { displayPrefix, mintToken } from "./format";
import { tokenHash } from "./secret";

/** A token as the console shows it: never its hash. */
export interface TokenRecord {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  revokedBy: string | null;
}

const RECORD = {
  id: true,
  userId: true,
  name: true,
  prefix: true,
  role: true,
  createdAt: true,
  expiresAt: true,
  lastUsedAt: true,
  revokedAt: true,
  revokedBy: true,
} as const;

/** lastUsedAt (and lastRefusedAt) are written at most this often per token. */
export const TOUCH_INTERVAL_MS = 60_000;

/**
 * Mints a token and stores its prefix and HMAC. The raw token is returned here and kept nowhere.
 * Throws `unauthorized:user-disabled` when its user is disabled by then, including by a disabling
 * that commits while this runs (lockEnabledUser), so no token outlives its user's disabling.
 */
export async function issueToken(
  input: { userId: string; name: string; role: Role; createdAt: Date; expiresAt: Date },
  db: PrismaClient = getDb(),
): Promise<{ token: string; record: TokenRecord }> {
  const token = mintToken();
  const record = await db.$transaction(async (tx) => {
    await lockEnabledUser(tx, input.userId);
    return tx.apiToken.create({
      data: { ...input, prefix: displayPrefix(token), hash: tokenHash(token) },
      select: RECORD,
    });
  });
  return { token, record };
}

/** Tokens neither revoked nor expired at `now`. */
export async function countLiveTokens(userId: string, now: Date, db: PrismaClient = getDb()): Promise<number> {
  return db.apiToken.count({ where: { userId, revokedAt: null, expiresAt: { gt: now } } });
}

/** Newest first; one user's, or everyone's. */
export async function listTokens(
  filter: { userId?: string },
  limit: number,
  db: PrismaClient = getDb(),
): Promise<TokenRecord[]> {
  return db.apiToken.findMany({
    where: filter.userId ? { userId: filter.userId } : {},
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    take: limit,
    select: RECORD,
  });
}

export async function getToken(id: string, db: PrismaClient = getDb()): Promise<TokenRecord | null> {
  return db.apiToken.findUnique({ where: { id }, select: RECORD });
}

/** Rows whose display prefix matches, with their hashes, for the constant-time comparison. */
export async function tokensWithPrefix(
  prefix: string,
  db: PrismaClient = getDb(),
): Promise<Array<TokenRecord & { hash: string; lastRefusedAt: Date | null }>> {
  return db.apiToken.findMany({ where: { prefix }, select: { ...RECORD, hash: true, lastRefusedAt: true }, take: 16 });
}

/**
 * Revokes a live token (of `ownerId` only, when given). Returns the token as it now is, with
 * `changed` false when it was revoked already; null when there is no such token (of that owner).
 */
export async function revokeToken(
  id: string,
  by: string,
  now: Date,
  ownerId: string | null,
  db: PrismaClient = getDb(),
): Promise<{ token: TokenRecord; changed: boolean } | null> {
  const where = ownerId ? { id, userId: ownerId } : { id };
  const { count } = await db.apiToken.updateMany({
    where: { ...where, revokedAt: null },
    data: { revokedAt: now, revokedBy: by },
  });
  const token = await db.apiToken.findFirst({ where, select: RECORD });
  return token ? { token, changed: count === 1 } : null;
}

/**
 * Revokes every token of a user not revoked yet, expired ones included (`db`: the transaction that
 * disables the user). Returns how many. Revoked, not deleted: `token.refused` rows and the token
 * lists keep naming them, and a revoked token never works again, whatever happens to its user.
 */
export async function revokeUserTokens(
  userId: string,
  by: string,
  now: Date,
  db: Prisma.TransactionClient = getDb(),
): Promise<number> {
  const { count } = await db.apiToken.updateMany({
    where: { userId, revokedAt: null },
    data: { revokedAt: now, revokedBy: by },
  });
  return count;
}

/** Records a use, unless one was recorded less than a minute ago (by any replica). */
export async function touchLastUsed(id: string, now: Date, db: PrismaClient = getDb()): Promise<boolean> {
  const before = new Date(now.getTime() - TOUCH_INTERVAL_MS);
  const { count } = await db.apiToken.updateMany({
    where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: before } }] },
    data: { lastUsedAt: now },
  });
  return count === 1;
}

/** Records a refused use; true for the one replica that recorded it, at most once a minute per token. */
export async function markRefused(id: string, now: Date, db: PrismaClient = getDb()): Promise<boolean> {
  const before = new Date(now.getTime() - TOUCH_INTERVAL_MS);
  const { count } = await db.apiToken.updateMany({
    where: { id, OR: [{ lastRefusedAt: null }, { lastRefusedAt: { lte: before } }] },
    data: { lastRefusedAt: now },
  });
  return count === 1;
}
