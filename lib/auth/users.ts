import "server-only";
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { Prisma, type User } from "@/lib/generated/prisma/client";
import { isRole, type Role } from "@/lib/auth/permissions";
import { processState } from "@/lib/process-state";

/** A user as the rest of the console sees it: never the password hash. */
export interface UserRecord {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  disabled: boolean;
  hasPassword: boolean;
  createdAt: Date;
  updatedAt: Date;
  lastSignInAt: Date | null;
}

export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;
const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

// scrypt cost; stored in each hash so it can be raised later without breaking old hashes.
const SCRYPT = { N: 1 << 15, r: 8, p: 1, keylen: 64 };

function scrypt(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize("NFKC"), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

const maxmemFor = (N: number, r: number) => 256 * N * r;

/** `scrypt$N$r$p$salt$key` (salt and key base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p, keylen } = SCRYPT;
  const key = await scrypt(password, salt, keylen, { N, r, p, maxmem: maxmemFor(N, r) });
  return ["scrypt", N, r, p, salt.toString("base64url"), key.toString("base64url")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || N > 1 << 20 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4], "base64url");
  const expected = Buffer.from(parts[5], "base64url");
  if (expected.length < 16) return false;
  const actual = await scrypt(password, salt, expected.length, { N, r, p, maxmem: maxmemFor(N, r) });
  return timingSafeEqual(actual, expected);
}

const dummy = processState("dummy-password-hash", () => ({ hash: null as Promise<string> | null }));
/** Hashed against when the email is unknown, so the response time does not reveal which emails exist. */
const getDummyHash = () => (dummy.hash ??= hashPassword(randomBytes(18).toString("base64")));

function toRecord(u: User): UserRecord {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    disabled: u.disabled,
    hasPassword: u.passwordHash !== null,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
    lastSignInAt: u.lastSignInAt,
  };
}

export function normaliseEmail(email: string): string {
  const e = String(email ?? "")
    .trim()
    .toLowerCase();
  if (!EMAIL_RE.test(e) || e.length > 254) {
    throw new AppError("bad_request:user", {
      userMessage: `"${String(email ?? "").slice(0, 80)}" is not a valid email address.`,
    });
  }
  return e;
}

function checkPassword(password: string) {
  if (typeof password !== "string" || password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError("bad_request:password", {
      userMessage: `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`,
    });
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new AppError("bad_request:password", {
      userMessage: `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`,
    });
  }
}

function checkRole(role: unknown): Role {
  if (!isRole(role))
    throw new AppError("bad_request:user", {
      userMessage: `Role must be viewer, operator or admin (got "${String(role)}").`,
    });
  return role;
}

function checkName(name: string | null | undefined): string | null {
  const n = name?.trim() ?? "";
  if (n.length > 200)
    throw new AppError("bad_request:user", { userMessage: "The name must be at most 200 characters long." });
  return n || null;
}

const isUniqueViolation = (e: unknown) => e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002";
const isNotFound = (e: unknown) => e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2025";

function notFound(id: string): AppError {
  return new AppError("not_found:user", { message: `user ${id} not found`, userMessage: "That user does not exist." });
}

export async function createUser(input: {
  email: string;
  name?: string | null;
  role: Role;
  password: string;
}): Promise<UserRecord> {
  const email = normaliseEmail(input.email);
  const role = checkRole(input.role);
  const name = checkName(input.name);
  checkPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  try {
    return toRecord(await getDb().user.create({ data: { email, name, role, passwordHash } }));
  } catch (e) {
    if (isUniqueViolation(e)) {
      throw new AppError("conflict:user", {
        message: `duplicate email ${email}`,
        userMessage: `A user with the email ${email} already exists.`,
        cause: e,
      });
    }
    throw e;
  }
}

/** The user for these credentials, or null (unknown email, wrong password, disabled, no password). */
export async function verifyCredentials(email: string, password: string): Promise<UserRecord | null> {
  if (typeof password !== "string" || password.length === 0 || password.length > MAX_PASSWORD_LENGTH) return null;
  const normalised = String(email ?? "")
    .trim()
    .toLowerCase();
  const user = normalised ? await getDb().user.findUnique({ where: { email: normalised } }) : null;
  const ok = await verifyPassword(password, user?.passwordHash ?? (await getDummyHash()));
  if (!user?.passwordHash || !ok || user.disabled) return null;
  return toRecord(user);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function getUserById(id: string): Promise<UserRecord | null> {
  if (typeof id !== "string" || !UUID_RE.test(id)) return null;
  const u = await getDb().user.findUnique({ where: { id } });
  return u ? toRecord(u) : null;
}

export async function getUserByEmail(email: string): Promise<UserRecord | null> {
  const u = await getDb().user.findUnique({
    where: {
      email: String(email ?? "")
        .trim()
        .toLowerCase(),
    },
  });
  return u ? toRecord(u) : null;
}

export async function listUsers(): Promise<UserRecord[]> {
  const users = await getDb().user.findMany({ orderBy: { email: "asc" } });
  return users.map(toRecord);
}

/**
 * Changes a user (`db`: a transaction the change belongs to). Disabling here only flips the flag:
 * ending the user's sessions and revoking their tokens is the use case's part (lib/users-admin),
 * in the same transaction, which this row's lock then orders against lockEnabledUser.
 */
export async function updateUser(
  id: string,
  patch: { role?: Role; disabled?: boolean; name?: string | null },
  db: Prisma.TransactionClient = getDb(),
): Promise<UserRecord> {
  if (typeof id !== "string" || !UUID_RE.test(id)) throw notFound(String(id));
  const data: Prisma.UserUpdateInput = {};
  if (patch.role !== undefined) data.role = checkRole(patch.role);
  if (patch.disabled !== undefined) data.disabled = Boolean(patch.disabled);
  if (patch.name !== undefined) data.name = checkName(patch.name);
  try {
    return toRecord(await db.user.update({ where: { id }, data }));
  } catch (e) {
    if (isNotFound(e)) throw notFound(id);
    throw e;
  }
}

/**
 * Inside a transaction that is about to give a user a session or a token: share-locks the user's
 * row and throws `unauthorized:user-disabled` when the user is disabled. Disabling updates that row
 * before it ends the sessions and revokes the tokens, so whatever is created under this lock either
 * commits first (and is ended by the disabling) or waits and sees the user disabled: nothing slips
 * in between to be revived by a re-enable. A user id with no row passes (nothing to protect: such
 * a session or token is refused at every use).
 */
export async function lockEnabledUser(tx: Prisma.TransactionClient, userId: string): Promise<void> {
  if (typeof userId !== "string" || !UUID_RE.test(userId)) return;
  const rows = await tx.$queryRawUnsafe<Array<{ disabled: boolean }>>(
    `SELECT disabled FROM users WHERE id = $1::uuid FOR SHARE`,
    userId,
  );
  if (rows[0]?.disabled) {
    throw new AppError("unauthorized:user-disabled", {
      message: `user ${userId} is disabled`,
      userMessage: "This account is disabled. Ask an admin to enable it.",
    });
  }
}

export async function setPassword(id: string, password: string): Promise<void> {
  checkPassword(password);
  if (typeof id !== "string" || !UUID_RE.test(id)) throw notFound(String(id));
  const passwordHash = await hashPassword(password);
  try {
    await getDb().user.update({ where: { id }, data: { passwordHash } });
  } catch (e) {
    if (isNotFound(e)) throw notFound(id);
    throw e;
  }
}

export async function countUsers(): Promise<number> {
  return getDb().user.count();
}

export async function touchSignIn(id: string): Promise<void> {
  if (typeof id !== "string" || !UUID_RE.test(id)) return;
  await getDb().user.updateMany({ where: { id }, data: { lastSignInAt: new Date() } });
}
