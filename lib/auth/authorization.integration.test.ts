import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import { createUser } from "@/lib/auth/users";
import { can, PERMISSIONS, type Permission } from "@/lib/auth/permissions";
import type { Actor } from "@/lib/auth/session";
import { isAppError } from "@/lib/errors";
import { MATRIX } from "@/test/access-matrix";
import { GUARDED_READS, MUTATING_USE_CASES } from "@/test/guarded-use-cases";

/**
 * Walks every mutating use case (and the payload/audit reads) as a viewer, straight through the
 * use-case layer as a hostile client of a server action would reach it: each must be refused with
 * `forbidden:<permission>` and the refusal must be in the audit log.
 */
const ALL = [...MUTATING_USE_CASES, ...GUARDED_READS];
let viewer: Actor;

beforeAll(async () => {
  const email = `viewer-${randomUUID().slice(0, 8)}@authz.test`;
  const u = await createUser({ email, role: "viewer", password: "viewer-password-long-enough" });
  viewer = { id: u.id, email: u.email, name: u.name, role: "viewer" };
});

afterAll(async () => {
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

describe("the list of guarded use cases", () => {
  it("covers every permission a viewer lacks (here, or in the authorization matrix's rows refused to viewers)", () => {
    const lacking = (Object.keys(PERMISSIONS) as Permission[]).filter((p) => !can("viewer", p));
    // The matrix (test/access-matrix.ts, lib/auth/matrix.integration.test.ts) walks every handler and action;
    // this list walks the use cases underneath for the ones it names.
    const covered = new Set<string>([
      ...ALL.map((u) => u.permission),
      ...MATRIX.filter((r) => !r.roles.includes("viewer") && r.permission).map((r) => r.permission!),
    ]);
    expect(lacking.length).toBeGreaterThan(0);
    for (const p of lacking) expect(covered, `no use case exercises ${p}`).toContain(p);
  });
  it("names only permissions a viewer lacks", () => {
    for (const u of ALL) expect(can("viewer", u.permission), u.name).toBe(false);
  });
});

describe("as a viewer", () => {
  for (const uc of ALL) {
    it(`${uc.name} is refused and the refusal is audited`, async () => {
      const requestId = `authz-${uc.name}-${randomUUID()}`;
      let error: unknown = null;
      try {
        await uc.invoke(viewer, { requestId, ip: "127.0.0.1" });
      } catch (e) {
        error = e;
      }
      expect(isAppError(error), `${uc.name} did not throw an AppError: ${String(error)}`).toBe(true);
      expect((error as { code: string }).code).toBe(`forbidden:${uc.permission}`);

      const { rows } = await queryAudit({ actor: viewer.email, action: uc.action }, { limit: 50 });
      const denial = rows.find((r) => r.requestId === requestId);
      expect(denial, `no audit row for ${uc.name}`).toBeDefined();
      expect(denial!.outcome).toBe("denied");
      expect(denial!.actorRole).toBe("viewer");
      expect(denial!.actorId).toBe(viewer.id);
      // Nothing else happened under that request: no success or failure row.
      expect(rows.filter((r) => r.requestId === requestId)).toHaveLength(1);
    });
  }
});
