import { describe, expect, it } from "vitest";
import { claimValues, mapRole, oidcConfig, parseRoleMap } from "./oidc";

const env = {
  DLQ_OIDC_ISSUER: "https://idp.example/realms/x/",
  DLQ_OIDC_CLIENT_ID: "dlq",
  DLQ_OIDC_CLIENT_SECRET: "s",
  DLQ_OIDC_ROLE_MAP: "dlq-admins:admin, dlq-operators:operator,dlq-viewers:viewer",
};

describe("oidcConfig", () => {
  it("is off without settings, and refuses half a configuration or unknown roles", () => {
    expect(oidcConfig({})).toBeNull();
    expect(() => oidcConfig({ DLQ_OIDC_ISSUER: "https://idp.example" })).toThrow(/together/);
    expect(() => oidcConfig({ ...env, DLQ_OIDC_ROLE_MAP: "x:root" })).toThrow(/not a role/);
    expect(() => oidcConfig({ ...env, DLQ_OIDC_DEFAULT_ROLE: "root" })).toThrow(/not a role/);
  });

  it("reads defaults: groups claim, no default role, SSO label", () => {
    const c = oidcConfig(env)!;
    expect(c).toMatchObject({
      issuer: "https://idp.example/realms/x",
      rolesClaim: "groups",
      defaultRole: null,
      name: "SSO",
      scope: "openid email profile",
    });
    expect([...c.roleMap]).toEqual([
      ["dlq-admins", "admin"],
      ["dlq-operators", "operator"],
      ["dlq-viewers", "viewer"],
    ]);
    expect(parseRoleMap("cn=ops,ou=groups:operator").get("cn=ops,ou=groups")).toBeUndefined(); // commas split pairs
    expect(parseRoleMap("team:a:admin").get("team:a")).toBe("admin");
  });
});

describe("mapRole", () => {
  const cfg = oidcConfig(env)!;
  it("takes the highest mapped role among the user's groups", () => {
    expect(mapRole({ groups: ["dlq-viewers", "dlq-operators", "other"] }, cfg)).toBe("operator");
    expect(mapRole({ groups: ["dlq-admins", "dlq-viewers"] }, cfg)).toBe("admin");
    expect(mapRole({ groups: "dlq-viewers other" }, cfg)).toBe("viewer");
  });

  it("falls back to the default role, else refuses", () => {
    expect(mapRole({ groups: ["other"] }, cfg)).toBeNull();
    expect(mapRole({}, cfg)).toBeNull();
    expect(mapRole({ groups: ["other"] }, { ...cfg, defaultRole: "viewer" })).toBe("viewer");
  });

  it("follows a dotted claim path and ignores inherited or non-string values", () => {
    expect(claimValues({ realm_access: { roles: ["dlq-admins", 3] } }, "realm_access.roles")).toEqual(["dlq-admins"]);
    expect(mapRole({ realm_access: { roles: ["dlq-admins"] } }, { ...cfg, rolesClaim: "realm_access.roles" })).toBe(
      "admin",
    );
    expect(claimValues({}, "constructor")).toEqual([]);
    expect(claimValues({ groups: { a: 1 } }, "groups")).toEqual([]);
  });
});
