import "server-only";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import { ROLES, type Role } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { audited } from "@/lib/use-case/audited";
import { roleRank, rolesUpTo } from "./roles";
import { countLiveTokens, issueToken, listTokens, revokeToken, type TokenRecord } from "./store";
import { parseInput } from "@/lib/use-case/input";

export { actorFromBearer, type BearerActor } from "./bearer";
export { tokenRateLimitOf } from "./rate";
export { rolesUpTo } from "./roles";

/** The longest a token may live, and the choices the profile page offers. */
export const MAX_TOKEN_DAYS = 365;
export const TOKEN_DAY_CHOICES = [7, 30, 90, 180, 365] as const;
/** Live (not revoked, not expired) tokens a user may hold at once. */
export const MAX_LIVE_TOKENS = 50;
const LIST_LIMIT = 500;
const DAY_MS = 86_400_000;

export const createTokenSchema = z.object({
  name: z
    .string()
    .trim()
    .min(1, "Give the token a name, e.g. what script or pipeline will use it")
    .max(100, "The name can be at most 100 characters")
    // Control and bidirectional-override characters could make a name read as another in the lists.
    .refine(
      (v) => !/[\p{Cc}\u202A-\u202E\u2066-\u2069]/u.test(v),
      "The name cannot contain control or text-direction characters",
    ),
  role: z.enum(ROLES, { message: "Role must be viewer, operator or admin" }),
  expiresInDays: z.coerce
    .number()
    .int("The expiry is a whole number of days")
    .min(1, "A token must live at least 1 day")
    .max(MAX_TOKEN_DAYS, `A token can live at most ${MAX_TOKEN_DAYS} days`),
});
const tokenIdSchema = z.object({ id: z.string().uuid() });

export type CreateTokenInput = z.input<typeof createTokenSchema>;
export type TokenState = "active" | "expired" | "revoked";

/** What lists show: never the hash; dates as ISO strings for client components. */
export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  role: Role;
  state: TokenState;
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface TokenAdminView extends TokenView {
  userId: string;
  userEmail: string | null;
  revokedByEmail: string | null;
}

export function tokenState(t: Pick<TokenRecord, "revokedAt" | "expiresAt">, now: Date): TokenState {
  if (t.revokedAt) return "revoked";
  return t.expiresAt.getTime() <= now.getTime() ? "expired" : "active";
}

function toView(t: TokenRecord, now: Date): TokenView {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    role: t.role,
    state: tokenState(t, now),
    createdAt: t.createdAt.toISOString(),
    expiresAt: t.expiresAt.toISOString(),
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
  };
}
function notFound(): AppError {
  return new AppError("not_found:token", { userMessage: "That API token does not exist (or is not yours)." });
}

function idOf(input: unknown): string | null {
  const id = (input as { id?: unknown } | null | undefined)?.id;
  return typeof id === "string" ? id.slice(0, 100) : null;
}

/**
 * Creates a personal API token for the signed-in user, with a role no higher than theirs and an
 * expiry of at most a year. Needs tokens:own; audited `token.create` (id, name, prefix, role,
 * expiry; never the secret). The raw token is in the result and nowhere else, ever: show it once.
 */
export async function createToken(
  actor: Actor,
  meta: RequestMeta,
  input: CreateTokenInput,
): Promise<{ token: string; view: TokenView }> {
  await authorize(actor, "tokens:own", { action: "token.create", meta });
  const data = parseInput(createTokenSchema, input, "bad_request:token");
  return audited(
    actor,
    meta,
    { action: "token.create" },
    async () => {
      if (actor.tokenId) {
        // A token that could mint tokens would outlive its own revocation and expiry.
        throw new AppError("forbidden:token-from-token", {
          userMessage: "API tokens are created on your profile page while signed in, not with another token.",
        });
      }
      if (roleRank(data.role) > roleRank(actor.role)) {
        throw new AppError("bad_request:token-role", {
          userMessage: `A token's role can be at most yours (${actor.role}): choose ${rolesUpTo(actor.role).join(" or ")}.`,
        });
      }
      const now = new Date();
      if ((await countLiveTokens(actor.id, now)) >= MAX_LIVE_TOKENS) {
        throw new AppError("conflict:token-limit", {
          userMessage: `You already have ${MAX_LIVE_TOKENS} live API tokens. Revoke the ones you no longer use first.`,
        });
      }
      const { token, record } = await issueToken({
        userId: actor.id,
        name: data.name,
        role: data.role,
        createdAt: now,
        expiresAt: new Date(now.getTime() + data.expiresInDays * DAY_MS),
      });
      return { token, view: toView(record, now) };
    },
    (r) => ({
      tokenId: r.view.id,
      name: r.view.name,
      prefix: r.view.prefix,
      role: r.view.role,
      expiresAt: r.view.expiresAt,
    }),
  );
}

/** The signed-in user's tokens, newest first. Needs tokens:own; not audited (a read of one's own list). */
export async function listMyTokens(actor: Actor, meta: RequestMeta): Promise<TokenView[]> {
  await authorize(actor, "tokens:own", { action: "token.list", meta });
  const now = new Date();
  return (await listTokens({ userId: actor.id }, LIST_LIMIT)).map((t) => toView(t, now));
}

/** Revokes one of the signed-in user's own tokens. Needs tokens:own; audited `token.revoke`. Another user's token is "not found". */
export async function revokeMyToken(actor: Actor, meta: RequestMeta, input: { id: string }): Promise<TokenView> {
  await authorize(actor, "tokens:own", { action: "token.revoke", target: idOf(input), meta });
  return revoke(actor, meta, input, actor.id);
}

/** Every user's tokens, newest first, with their owners. Needs tokens:manage; a refusal is audited `token.list_all`. */
export async function listAllTokens(actor: Actor, meta: RequestMeta): Promise<TokenAdminView[]> {
  await authorize(actor, "tokens:manage", { action: "token.list_all", meta });
  const now = new Date();
  const tokens = await listTokens({}, LIST_LIMIT);
  const ids = [...new Set(tokens.flatMap((t) => [t.userId, ...(t.revokedBy ? [t.revokedBy] : [])]))];
  const users = await getDb().user.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } });
  const emailOf = new Map(users.map((u) => [u.id, u.email]));
  return tokens.map((t) => ({
    ...toView(t, now),
    userId: t.userId,
    userEmail: emailOf.get(t.userId) ?? null,
    revokedByEmail: t.revokedBy ? (emailOf.get(t.revokedBy) ?? null) : null,
  }));
}

/** Revokes anyone's token. Needs tokens:manage; audited `token.revoke` with the owner. */
export async function revokeAnyToken(actor: Actor, meta: RequestMeta, input: { id: string }): Promise<TokenView> {
  await authorize(actor, "tokens:manage", { action: "token.revoke", target: idOf(input), meta });
  return revoke(actor, meta, input, null);
}

async function revoke(actor: Actor, meta: RequestMeta, input: unknown, ownerId: string | null): Promise<TokenView> {
  const r = tokenIdSchema.safeParse(input);
  if (!r.success) throw notFound();
  const { id } = r.data;
  let outcome: { token: TokenRecord; changed: boolean } | null = null;
  const view = await audited(
    actor,
    meta,
    { action: "token.revoke", target: id },
    async () => {
      outcome = await revokeToken(id, actor.id, new Date(), ownerId);
      if (!outcome) throw notFound();
      return toView(outcome.token, new Date());
    },
    (v) => ({
      tokenId: v.id,
      name: v.name,
      prefix: v.prefix,
      ...(outcome && outcome.token.userId !== actor.id ? { ownerId: outcome.token.userId } : {}),
      ...(outcome && !outcome.changed ? { alreadyRevoked: true } : {}),
    }),
  );
  return view;
}
