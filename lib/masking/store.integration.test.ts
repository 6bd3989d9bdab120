import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { revealPayload } from "@/lib/dlq/reveal-payload";
import { DEFAULT_MASKING_RULES } from "./defaults";
import { maskingPolicy } from "./policy";
import { loadMaskingConfig } from "./store";
import { saveMaskingRules, viewMaskingConfig } from "./use-cases";

const meta = () => ({ requestId: `mask-${randomUUID()}`, ip: "127.0.0.1" });
const actors = {} as Record<"viewer" | "operator" | "admin", Actor>;

beforeAll(async () => {
  await getDb().maskingConfigVersion.deleteMany({});
  for (const role of ["viewer", "operator", "admin"] as const) {
    const u = await createUser({
      email: `${role}-${randomUUID().slice(0, 8)}@masking.test`,
      role,
      password: "a-long-enough-password",
    });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
});

// The versions saved here (an emails rule off, sensitive DLQs) would be the masking of every test
// file that runs after this one on the same database: the next read starts again from the defaults.
afterAll(async () => {
  await getDb().maskingConfigVersion.deleteMany({});
});

describe("masking store", () => {
  it("stores the defaults as version 1 on first read, once", async () => {
    const [a, b] = await Promise.all([loadMaskingConfig(), loadMaskingConfig()]);
    expect(a.version).toBe(1);
    expect(b.version).toBe(1);
    expect(a.rules.map((r) => r.id)).toEqual(DEFAULT_MASKING_RULES.map((r) => r.id));
    expect(a.sensitive).toEqual([]);
  });

  it("saves versions, audits each save, and refuses a stale version", async () => {
    const m = meta();
    const rules = DEFAULT_MASKING_RULES.map((r) => (r.id === "emails" ? { ...r, enabled: false } : r));
    const saved = await saveMaskingRules(actors.admin, m, {
      rules,
      sensitive: [{ connectionId: "*", pattern: "payments.*" }],
      expectedVersion: 1,
    });
    expect(saved.version).toBe(2);
    expect(saved.updatedBy).toBe(actors.admin.email);
    const { rows } = await queryAudit({ action: "masking.save", actor: actors.admin.email }, { limit: 10 });
    const row = rows.find((r) => r.requestId === m.requestId)!;
    expect(row.outcome).toBe("success");
    expect(row.details).toMatchObject({ version: 2, sensitive: "*/payments.*" });
    expect(String((row.details as Record<string, unknown>).rules)).toContain("emails (off)");

    await expect(
      saveMaskingRules(actors.admin, meta(), { rules, sensitive: [], expectedVersion: 1 }),
    ).rejects.toMatchObject({ code: "conflict:masking" });
    const { versions } = await viewMaskingConfig(actors.admin, meta());
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
  });

  it("rejects invalid rules with the rule named, and audits the failure", async () => {
    const m = meta();
    await expect(
      saveMaskingRules(actors.admin, m, {
        rules: [
          { id: "bad", target: { kind: "field", paths: ["$.a[x]"] }, action: { kind: "hide" }, roles: ["viewer"] },
        ],
        sensitive: [],
      }),
    ).rejects.toMatchObject({ code: "bad_request:masking" });
    const { rows } = await queryAudit({ action: "masking.save", actor: actors.admin.email }, { limit: 10 });
    expect(rows.find((r) => r.requestId === m.requestId)?.outcome).toBe("failure");
  });

  it("refuses operators and viewers, audited as denied", async () => {
    for (const role of ["viewer", "operator"] as const) {
      const m = meta();
      await expect(saveMaskingRules(actors[role], m, { rules: [], sensitive: [] })).rejects.toMatchObject({
        code: "forbidden:masking:manage",
      });
      await expect(viewMaskingConfig(actors[role], meta())).rejects.toMatchObject({ code: "forbidden:masking:manage" });
      const { rows } = await queryAudit({ action: "masking.save", actor: actors[role].email }, { limit: 10 });
      expect(rows.find((r) => r.requestId === m.requestId)?.outcome).toBe("denied");
    }
  });

  it("policies: sensitive DLQs hide payloads from viewers and apply every rule to operators", async () => {
    const rules = DEFAULT_MASKING_RULES.map((r) => (r.id === "emails" ? { ...r, roles: ["viewer" as const] } : r));
    await saveMaskingRules(actors.admin, meta(), { rules, sensitive: [{ connectionId: "*", pattern: "payments.*" }] });
    const v = await maskingPolicy("viewer", "any-conn", "payments.dlq");
    expect(v).toMatchObject({ sensitive: true, payload: "none" });
    expect(v.rules.every((r) => r.action.kind === "hide")).toBe(true);
    const o = await maskingPolicy("operator", "any-conn", "payments.dlq");
    expect(o.payload).toBe("masked");
    expect(o.rules.map((r) => r.id)).toContain("emails");
    const plain = await maskingPolicy("operator", "any-conn", "orders.dlq");
    expect(plain.rules.map((r) => r.id)).not.toContain("emails");
  });

  it("reveal needs payload:reveal and a reason; a missing reason is refused before any read", async () => {
    await expect(
      revealPayload(actors.operator, meta(), {
        connectionId: "c",
        queue: "q",
        letterId: "l",
        reason: "a good long reason",
      }),
    ).rejects.toMatchObject({
      code: "forbidden:payload:reveal",
    });
    await expect(
      revealPayload(actors.admin, meta(), { connectionId: "c", queue: "q", letterId: "l", reason: "short" }),
    ).rejects.toMatchObject({
      code: "bad_request:reason",
    });
  });
});
