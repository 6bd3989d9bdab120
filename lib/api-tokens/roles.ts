import { ROLES, type Role } from "@/lib/auth/permissions";

/** viewer < operator < admin, in the order lib/auth/permissions.ts lists them. */
export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

/** The lower of two roles: what a token may do is capped by its user's role at each use. */
export function lowerRole(a: Role, b: Role): Role {
  return roleRank(a) <= roleRank(b) ? a : b;
}

/** The roles a user of `role` may give a token: theirs and below. */
export function rolesUpTo(role: Role): Role[] {
  return ROLES.filter((r) => roleRank(r) <= roleRank(role));
}
