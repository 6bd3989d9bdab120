import "server-only";
import { can, isRole, type Permission, type Role } from "@/lib/auth/permissions";
import { getUserById } from "@/lib/auth/users";

/** Why the user a job acts for may no longer have it run; null means they still may. */
export interface CreatorRefusal {
  why: "deleted" | "disabled" | "role";
  /** Their role now (null when deleted or not a known role). */
  role: Role | null;
  /** The first permission of those asked that they lack (for `why: "role"`), else the first asked. */
  permission: Permission;
  /** In the operator's words, e.g. "their account is disabled". */
  text: string;
}

/**
 * A job runs in the name of whoever started it, long after the request that authorized them: each
 * run asks again whether that user still exists, is enabled, and holds every permission the next
 * step needs. Looked up fresh (no cache), so a demotion takes effect at the next check.
 */
export async function creatorRefusal(
  userId: string | null,
  permissions: readonly Permission[],
): Promise<CreatorRefusal | null> {
  const user = userId ? await getUserById(userId) : null;
  const first = permissions[0]!;
  if (!user) return { why: "deleted", role: null, permission: first, text: "their account no longer exists" };
  const role = isRole(user.role) ? user.role : null;
  if (user.disabled) return { why: "disabled", role, permission: first, text: "their account is disabled" };
  const missing = permissions.find((p) => !can(role, p));
  if (missing)
    return {
      why: "role",
      role,
      permission: missing,
      text: `their role (${role ?? "none"}) no longer allows ${missing}`,
    };
  return null;
}
