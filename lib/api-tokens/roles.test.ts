import { describe, expect, it } from "vitest";
import { lowerRole, rolesUpTo } from "./roles";

describe("token roles", () => {
  it("caps a token by its user's role", () => {
    expect(lowerRole("operator", "viewer")).toBe("viewer");
    expect(lowerRole("viewer", "admin")).toBe("viewer");
    expect(lowerRole("admin", "admin")).toBe("admin");
  });
  it("offers a user their role and the ones below", () => {
    expect(rolesUpTo("viewer")).toEqual(["viewer"]);
    expect(rolesUpTo("operator")).toEqual(["viewer", "operator"]);
    expect(rolesUpTo("admin")).toEqual(["viewer", "operator", "admin"]);
  });
});
