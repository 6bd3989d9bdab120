import { ROLES, isRole, type Role } from "@/lib/auth/permissions";

/**
 * OpenID Connect sign-in, configured by environment:
 *   DLQ_OIDC_ISSUER, DLQ_OIDC_CLIENT_ID, DLQ_OIDC_CLIENT_SECRET (all three turn it on),
 *   DLQ_OIDC_NAME (button label, default "SSO"), DLQ_OIDC_SCOPE (default "openid email profile"),
 *   DLQ_OIDC_ROLES_CLAIM (default "groups"; a dotted path such as realm_access.roles works),
 *   DLQ_OIDC_ROLE_MAP ("dlq-admins:admin,dlq-operators:operator,dlq-viewers:viewer"),
 *   DLQ_OIDC_DEFAULT_ROLE (role for users in none of the mapped groups; unset: they are refused).
 */
export interface OidcConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
  name: string;
  scope: string;
  rolesClaim: string;
  roleMap: ReadonlyMap<string, Role>;
  defaultRole: Role | null;
}

type Env = Record<string, string | undefined>;

export function parseRoleMap(raw: string | undefined): Map<string, Role> {
  const map = new Map<string, Role>();
  for (const pair of (raw ?? "").split(",")) {
    const i = pair.lastIndexOf(":");
    if (i <= 0) continue;
    const group = pair.slice(0, i).trim();
    const role = pair.slice(i + 1).trim();
    if (!group) continue;
    if (!isRole(role)) throw new Error(`DLQ_OIDC_ROLE_MAP: "${role}" is not a role (${ROLES.join(", ")})`);
    map.set(group, role);
  }
  return map;
}

/** The OIDC settings, or null when OIDC is not configured. Throws on a half or wrong configuration. */
export function oidcConfig(env: Env = process.env): OidcConfig | null {
  const issuer = env.DLQ_OIDC_ISSUER?.trim();
  const clientId = env.DLQ_OIDC_CLIENT_ID?.trim();
  const clientSecret = env.DLQ_OIDC_CLIENT_SECRET;
  if (!issuer && !clientId && !clientSecret) return null;
  if (!issuer || !clientId || !clientSecret)
    throw new Error("OIDC needs DLQ_OIDC_ISSUER, DLQ_OIDC_CLIENT_ID and DLQ_OIDC_CLIENT_SECRET together");
  const defaultRole = env.DLQ_OIDC_DEFAULT_ROLE?.trim() || null;
  if (defaultRole !== null && !isRole(defaultRole))
    throw new Error(`DLQ_OIDC_DEFAULT_ROLE: "${defaultRole}" is not a role`);
  return {
    issuer: issuer.replace(/\/+$/, ""),
    clientId,
    clientSecret,
    name: env.DLQ_OIDC_NAME?.trim() || "SSO",
    scope: env.DLQ_OIDC_SCOPE?.trim() || "openid email profile",
    rolesClaim: env.DLQ_OIDC_ROLES_CLAIM?.trim() || "groups",
    roleMap: parseRoleMap(env.DLQ_OIDC_ROLE_MAP),
    defaultRole,
  };
}

/** The claim's values: an array of strings, or one string of space- or comma-separated names. */
export function claimValues(claims: Record<string, unknown>, path: string): string[] {
  let v: unknown = claims;
  for (const key of path.split(".")) {
    if (!v || typeof v !== "object" || !Object.hasOwn(v, key)) return [];
    v = (v as Record<string, unknown>)[key];
  }
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === "string");
  if (typeof v === "string") return v.split(/[\s,]+/).filter(Boolean);
  return [];
}

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** The highest role any of the user's groups maps to, else the default role, else null (refused). */
export function mapRole(
  claims: Record<string, unknown>,
  cfg: Pick<OidcConfig, "rolesClaim" | "roleMap" | "defaultRole">,
): Role | null {
  let best: Role | null = null;
  for (const g of claimValues(claims, cfg.rolesClaim)) {
    const r = cfg.roleMap.get(g);
    if (r && (best === null || RANK[r] > RANK[best])) best = r;
  }
  return best ?? cfg.defaultRole;
}
