import { describe, expect, it } from "vitest";
import { PERMISSIONS, ROLES, can, isRole, type Permission } from "./permissions";

const permissions = Object.keys(PERMISSIONS) as Permission[];

describe("permissions table", () => {
  it("gives admin every permission", () => {
    for (const p of permissions) expect(can("admin", p), p).toBe(true);
  });

  it("is monotonic: each role has everything the role below it has", () => {
    for (const p of permissions) {
      if (can("viewer", p)) expect(can("operator", p), p).toBe(true);
      if (can("operator", p)) expect(can("admin", p), p).toBe(true);
    }
  });

  it("keeps payloads, risky reads, audit and user management from viewers", () => {
    const viewerDenied: Permission[] = [
      "letter:read-payload",
      "dlq:browse-risky",
      "audit:read",
      "audit:verify",
      "users:manage",
    ];
    for (const p of viewerDenied) expect(can("viewer", p), p).toBe(false);
    expect(can("operator", "users:manage")).toBe(false);
    expect(can("operator", "audit:verify")).toBe(false);
  });

  it("lets viewers read and export triage metadata, operators scan, only admins edit rules", () => {
    expect(can("viewer", "triage:read")).toBe(true);
    expect(can("viewer", "triage:export")).toBe(true);
    expect(can("viewer", "triage:scan")).toBe(false);
    expect(can("operator", "triage:scan")).toBe(true);
    expect(can("operator", "triage:rules")).toBe(false);
    expect(can("admin", "triage:rules")).toBe(true);
  });

  it("lets operators sample and bulk redrive; only admins start the rest without a clean sample", () => {
    expect(can("viewer", "redrive:read")).toBe(true);
    for (const p of ["redrive:sample", "redrive:bulk", "redrive:override"] as const)
      expect(can("viewer", p), p).toBe(false);
    expect(can("operator", "redrive:sample")).toBe(true);
    expect(can("operator", "redrive:bulk")).toBe(true);
    expect(can("operator", "redrive:override")).toBe(false);
    expect(can("admin", "redrive:override")).toBe(true);
  });

  it("shows viewers masked payloads only; downloads, exports, reveal and masking rules need more", () => {
    expect(can("viewer", "letter:view-payload")).toBe(true);
    expect(can("viewer", "letter:read-payload")).toBe(false);
    expect(can("operator", "letter:read-payload")).toBe(true);
    for (const p of ["payload:reveal", "masking:manage"] as const) {
      expect(can("viewer", p), p).toBe(false);
      expect(can("operator", p), p).toBe(false);
      expect(can("admin", p), p).toBe(true);
    }
  });

  it("lists only known roles", () => {
    for (const p of permissions) for (const r of PERMISSIONS[p]) expect(ROLES).toContain(r);
  });

  it("refuses a missing or unknown role", () => {
    expect(can(null, "dlq:list")).toBe(false);
    expect(can(undefined, "dlq:list")).toBe(false);
    expect(can("root" as never, "dlq:list")).toBe(false);
    expect(isRole("root")).toBe(false);
    expect(isRole("viewer")).toBe(true);
  });

  it("lets only admins discard and put letters back; every role reads the archive and discard progress", () => {
    for (const r of ["viewer", "operator"] as const) {
      expect(can(r, "discard:run"), r).toBe(false);
      expect(can(r, "archive:restore"), r).toBe(false);
    }
    expect(can("admin", "discard:run")).toBe(true);
    expect(can("admin", "archive:restore")).toBe(true);
    for (const r of ROLES) {
      expect(can(r, "archive:read"), r).toBe(true);
      expect(can(r, "discard:read"), r).toBe(true);
    }
  });

  it("lets only admins repair and resubmit a letter", () => {
    expect(can("viewer", "letter:repair")).toBe(false);
    expect(can("operator", "letter:repair")).toBe(false);
    expect(can("admin", "letter:repair")).toBe(true);
  });
});
