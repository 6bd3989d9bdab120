import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb } from "@/lib/db";
import { isAppError } from "@/lib/errors";
import {
  countUsers,
  createUser,
  getUserByEmail,
  getUserById,
  listUsers,
  setPassword,
  touchSignIn,
  updateUser,
  verifyCredentials,
  verifyPassword,
  hashPassword,
} from "./users";

// Runs on the shared test database (DATABASE_URL): unique emails keep runs independent.
const tag = randomBytes(4).toString("hex");
const email = (name: string) => `${name}-${tag}@Users.Test`;
const PASSWORD = "correct horse battery";

afterAll(() => closeDb());

async function appErrorOf(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (isAppError(e)) return e;
    throw e;
  }
  throw new Error("expected an AppError");
}

describe("user store", () => {
  it("creates a user with a lowercased email and a salted scrypt hash, and verifies the password", async () => {
    const before = await countUsers();
    const u = await createUser({ email: email("Ann"), name: " Ann ", role: "operator", password: PASSWORD });
    expect(u).toMatchObject({
      email: email("ann").toLowerCase(),
      name: "Ann",
      role: "operator",
      disabled: false,
      hasPassword: true,
    });
    expect("passwordHash" in u).toBe(false);
    expect(await countUsers()).toBe(before + 1);
    expect((await getUserById(u.id))?.email).toBe(u.email);
    expect((await listUsers()).some((x) => x.id === u.id)).toBe(true);

    expect((await verifyCredentials(email("ANN"), PASSWORD))?.id).toBe(u.id);
    expect(await verifyCredentials(email("ann"), `${PASSWORD}!`)).toBeNull();
    expect(await verifyCredentials(email("nobody"), PASSWORD)).toBeNull();
    expect(await verifyCredentials(email("ann"), "")).toBeNull();

    await touchSignIn(u.id);
    expect((await getUserById(u.id))?.lastSignInAt).toBeInstanceOf(Date);
  });

  it("refuses disabled users, and lets them in again when re-enabled", async () => {
    const u = await createUser({ email: email("dis"), role: "viewer", password: PASSWORD });
    await updateUser(u.id, { disabled: true });
    expect(await verifyCredentials(u.email, PASSWORD)).toBeNull();
    const back = await updateUser(u.id, { disabled: false, role: "admin" });
    expect(back.role).toBe("admin");
    expect((await verifyCredentials(u.email, PASSWORD))?.role).toBe("admin");
  });

  it("changes passwords", async () => {
    const u = await createUser({ email: email("pw"), role: "viewer", password: PASSWORD });
    await setPassword(u.id, "a whole new password");
    expect(await verifyCredentials(u.email, PASSWORD)).toBeNull();
    expect((await verifyCredentials(u.email, "a whole new password"))?.id).toBe(u.id);
  });

  it("reports duplicates, short passwords, bad emails, bad roles and unknown ids as AppErrors", async () => {
    await createUser({ email: email("dup"), role: "viewer", password: PASSWORD });
    const dup = await appErrorOf(createUser({ email: email("DUP"), role: "viewer", password: PASSWORD }));
    expect(dup.code).toBe("conflict:user");
    expect(dup.userMessage).toMatch(/already exists/);

    const short = await appErrorOf(createUser({ email: email("short"), role: "viewer", password: "elevenchars" }));
    expect(short.code).toBe("bad_request:password");
    expect(short.userMessage).toMatch(/at least 12 characters/);
    expect(await getUserByEmail(email("short"))).toBeNull();

    expect((await appErrorOf(createUser({ email: "not-an-email", role: "viewer", password: PASSWORD }))).code).toBe(
      "bad_request:user",
    );
    expect(
      (await appErrorOf(createUser({ email: email("role"), role: "root" as never, password: PASSWORD }))).code,
    ).toBe("bad_request:user");
    expect((await appErrorOf(updateUser("00000000-0000-4000-8000-000000000000", { role: "admin" }))).code).toBe(
      "not_found:user",
    );
    expect((await appErrorOf(setPassword("00000000-0000-4000-8000-000000000000", PASSWORD))).code).toBe(
      "not_found:user",
    );
    expect(await getUserById("not-a-uuid")).toBeNull();
  });
});

describe("password hashes", () => {
  it("encode their parameters and salt, and reject tampered or malformed hashes", async () => {
    const h = await hashPassword(PASSWORD);
    expect(h).toMatch(/^scrypt\$32768\$8\$1\$[\w-]+\$[\w-]+$/);
    expect(await hashPassword(PASSWORD)).not.toBe(h);
    expect(await verifyPassword(PASSWORD, h)).toBe(true);
    // Flip a character in the middle of the key (the last base64url character carries padding bits).
    const at = h.length - 20;
    const tampered = h.slice(0, at) + (h[at] === "A" ? "B" : "A") + h.slice(at + 1);
    expect(await verifyPassword(PASSWORD, tampered)).toBe(false);
    expect(await verifyPassword(PASSWORD, "plain")).toBe(false);
    expect(await verifyPassword(PASSWORD, "scrypt$99999999$8$1$abc$def")).toBe(false);
  });
});
