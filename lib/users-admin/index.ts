import "server-only";
import { z } from "zod";
import { revokeUserTokens } from "@/lib/api-tokens/store";
import { recordAudit, recordAuditIn, type AuditEntry } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import { ROLES } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { endUserSessions } from "@/lib/auth/sessions";
import { createUser, listUsers, updateUser } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { audited, auditActor, errorCodeOf } from "@/lib/use-case/audited";
import { parseInput } from "@/lib/use-case/input";

/** As the audit log's own transactions: its chain lock may have to be waited for. */
const TX_OPTIONS = { maxWait: 15_000, timeout: 15_000 } as const;

export const createUserSchema = z.object({
  email: z.string().trim().toLowerCase().email("Enter a valid email address").max(200),
  name: z
    .string()
    .trim()
    .max(200)
    .optional()
    .transform((v) => (v ? v : undefined)),
  role: z.enum(ROLES),
  password: z.string().min(12, "The initial password needs at least 12 characters").max(200),
});

export const updateUserSchema = z
  .object({
    id: z.string().min(1).max(100),
    role: z.enum(ROLES).optional(),
    disabled: z.boolean().optional(),
  })
  .refine((v) => v.role !== undefined || v.disabled !== undefined, { message: "Nothing to change" });

export type CreateUserInput = z.input<typeof createUserSchema>;
export type UpdateUserInput = z.input<typeof updateUserSchema>;
/** Users without password hashes. Needs users:manage; not audited (reading a list, no change). */
export async function listUsersAsAdmin(actor: Actor, meta: RequestMeta) {
  await authorize(actor, "users:manage", { action: "user.list", meta });
  const users = await listUsers();
  return users.map((u) => ({
    id: u.id,
    email: u.email,
    name: u.name ?? null,
    role: u.role,
    disabled: Boolean(u.disabled),
    createdAt: u.createdAt ? new Date(u.createdAt).toISOString() : null,
  }));
}

/** Needs users:manage; audited `user.create` (never the password). */
export async function createUserAsAdmin(actor: Actor, meta: RequestMeta, input: CreateUserInput) {
  await authorize(actor, "users:manage", {
    action: "user.create",
    target: typeof input?.email === "string" ? input.email : null,
    meta,
  });
  const data = parseInput(createUserSchema, input, "bad_request:user");
  return audited(
    actor,
    meta,
    { action: "user.create", target: data.email },
    async () => {
      const u = await createUser({ email: data.email, name: data.name, role: data.role, password: data.password });
      return { id: u.id, email: u.email, role: u.role };
    },
    (r) => ({ userId: r.id, role: r.role }),
  );
}

/**
 * Change a role or disable/enable. Needs users:manage; audited `user.update`. Admins cannot lock
 * themselves out.
 *
 * Disabling ends every session of the user and revokes every API token of theirs, in the
 * transaction that sets the flag and writes the audit row (with how many of each), so either all of
 * it happens and is recorded or none of it. Enabling again restores neither: the user signs in anew
 * and makes new tokens. Sessions and tokens being created meanwhile wait for this transaction and
 * are refused after it (lockEnabledUser), so none survives it.
 */
export async function updateUserAsAdmin(actor: Actor, meta: RequestMeta, input: UpdateUserInput) {
  await authorize(actor, "users:manage", {
    action: "user.update",
    target: typeof input?.id === "string" ? input.id : null,
    meta,
  });
  const data = parseInput(updateUserSchema, input, "bad_request:user");
  const entry = (outcome: "success" | "failure", details: Record<string, unknown>): AuditEntry => ({
    actor: auditActor(actor),
    action: "user.update",
    outcome,
    target: data.id,
    requestId: meta.requestId,
    ip: meta.ip,
    details: meta.clientRequestId ? { ...details, clientRequestId: meta.clientRequestId } : details,
  });
  try {
    if (data.id === actor.id && (data.disabled === true || (data.role && data.role !== "admin"))) {
      throw new AppError("conflict:self", {
        userMessage: "You cannot disable yourself or remove your own admin role; ask another admin.",
      });
    }
    return await getDb().$transaction(async (tx) => {
      const u = await updateUser(data.id, { role: data.role, disabled: data.disabled }, tx);
      let ended: { sessionsEnded: number; tokensRevoked: number } | null = null;
      if (data.disabled === true) {
        const now = new Date();
        ended = {
          sessionsEnded: await endUserSessions(u.id, "user_disabled", now, tx),
          tokensRevoked: await revokeUserTokens(u.id, actor.id, now, tx),
        };
      }
      await recordAuditIn(
        tx,
        entry("success", {
          email: u.email,
          ...(data.role ? { role: data.role } : {}),
          ...(data.disabled !== undefined ? { disabled: data.disabled } : {}),
          ...ended,
        }),
      );
      return { id: u.id, email: u.email, role: u.role, disabled: Boolean(u.disabled), ...ended };
    }, TX_OPTIONS);
  } catch (e) {
    await recordAudit(entry("failure", { error: errorCodeOf(e) })).catch((auditError: unknown) =>
      console.error("audit write failed after a failed action", auditError),
    );
    throw e;
  }
}
