import type { Role } from "@/lib/auth/permissions";

/** Test-only accounts created by scripts/test.sh in the e2e database (e2e/auth.setup.ts signs each in once). */
export const E2E_USERS: Record<Role, { email: string; password: string }> = {
  admin: { email: "admin@e2e.test", password: "e2e-admin-password-1" },
  operator: { email: "operator@e2e.test", password: "e2e-operator-password-1" },
  viewer: { email: "viewer@e2e.test", password: "e2e-viewer-password-1" },
};
