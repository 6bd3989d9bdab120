import "server-only";
import { recordAudit } from "@/lib/audit";
import { getDb } from "@/lib/db";
import { claimValues, mapRole, type OidcConfig } from "@/lib/auth/oidc";
import type { Role } from "@/lib/auth/permissions";
import { getUserByEmail, touchSignIn, updateUser } from "@/lib/auth/users";

export type OidcSignIn =
  | { ok: true; userId: string }
  | { ok: false; reason: "no_email" | "email_unverified" | "no_role" | "disabled" };

/**
 * Creates or updates the console user for an OIDC sign-in, keyed by email, with the role mapped
 * from the token's groups claim, re-mapped on every sign-in (the identity provider is the source of
 * truth for SSO users). Every outcome is audited: auth.sign_in, user.provisioned when the user is
 * created or the role changes, auth.sign_in_refused when no role maps or the user is disabled.
 */
export async function signInOidcUser(claims: Record<string, unknown>, cfg: OidcConfig): Promise<OidcSignIn> {
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  const name =
    typeof claims.name === "string"
      ? claims.name.slice(0, 200)
      : typeof claims.preferred_username === "string"
        ? claims.preferred_username.slice(0, 200)
        : null;
  const groups = claimValues(claims, cfg.rolesClaim).slice(0, 50);
  const refuse = async (
    reason: Exclude<OidcSignIn, { ok: true }>["reason"],
    role: Role | null = null,
    id: string | null = null,
  ): Promise<OidcSignIn> => {
    await recordAudit({
      actor: { id, email: email || null, role },
      action: "auth.sign_in_refused",
      outcome: "denied",
      details: {
        method: "oidc",
        reason,
        groups,
        subject: typeof claims.sub === "string" ? claims.sub.slice(0, 200) : null,
      },
    });
    return { ok: false, reason };
  };
  if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) return refuse("no_email");
  // An address the provider itself has not verified could name another console user.
  if (claims.email_verified === false) return refuse("email_unverified");
  const role = mapRole(claims, cfg);
  const existing = await getUserByEmail(email);
  if (existing?.disabled) return refuse("disabled", existing.role, existing.id);
  if (!role) return refuse("no_role", null, existing?.id ?? null);

  let userId: string;
  if (!existing) {
    const created = await getDb().user.create({
      data: { email, name, role, passwordHash: null },
      select: { id: true },
    });
    userId = created.id;
  } else {
    userId = existing.id;
    if (existing.role !== role || (name && existing.name !== name))
      await updateUser(existing.id, { role, ...(name ? { name } : {}) });
  }
  if (!existing || existing.role !== role) {
    await recordAudit({
      actor: { id: userId, email, role },
      action: "user.provisioned",
      outcome: "success",
      target: email,
      details: { method: "oidc", created: !existing, previousRole: existing?.role ?? null, role, groups },
    });
  }
  await touchSignIn(userId);
  await recordAudit({
    actor: { id: userId, email, role },
    action: "auth.sign_in",
    outcome: "success",
    details: { method: "oidc", groups },
  });
  return { ok: true, userId };
}
