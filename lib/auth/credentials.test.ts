import { describe, expect, it } from "vitest";
import { credentialsSchema } from "./credentials";

describe("credentialsSchema", () => {
  it("accepts the local first users' addresses and normalises case and spaces", () => {
    expect(credentialsSchema.parse({ email: " Admin@LocalHost ", password: "x" }).email).toBe("admin@localhost");
    expect(credentialsSchema.safeParse({ email: "operator@e2e.test", password: "x" }).success).toBe(true);
  });

  it("refuses what cannot be an address, empty passwords and oversized input", () => {
    for (const email of ["", "admin", "a b@c", "@x", "x@"])
      expect(credentialsSchema.safeParse({ email, password: "x" }).success, email).toBe(false);
    expect(credentialsSchema.safeParse({ email: "a@b", password: "" }).success).toBe(false);
    expect(credentialsSchema.safeParse({ email: "a@b", password: "x".repeat(1025) }).success).toBe(false);
    expect(credentialsSchema.safeParse({ email: `${"a".repeat(320)}@b`, password: "x" }).success).toBe(false);
  });
});
