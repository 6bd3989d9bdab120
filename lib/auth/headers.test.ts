import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, newNonce } from "./csp";
import { isSameOrigin } from "./origin";
import { credentialsEnabled, sessionCookieName, signInLimitPolicy } from "./config";
import { signInErrorMessage } from "./sign-in-errors";

describe("contentSecurityPolicy", () => {
  it("allows scripts only by nonce, never inline or eval, and forbids framing, plugins and base changes", () => {
    const csp = contentSecurityPolicy("abc123", { https: false });
    const d = Object.fromEntries(csp.split("; ").map((x) => [x.split(" ")[0], x.split(" ").slice(1).join(" ")]));
    expect(d["script-src"]).toBe("'self' 'nonce-abc123' 'strict-dynamic'");
    expect(d["script-src"]).not.toMatch(/unsafe/);
    expect(d["style-src"]).not.toMatch(/unsafe/);
    expect(d["frame-ancestors"]).toBe("'none'");
    expect(d["object-src"]).toBe("'none'");
    expect(d["base-uri"]).toBe("'self'");
    expect(d["form-action"]).toBe("'self'");
    expect(csp).not.toMatch(/upgrade-insecure-requests/);
    expect(contentSecurityPolicy("n", { https: true })).toMatch(/upgrade-insecure-requests$/);
  });

  it("makes a fresh 128-bit nonce each time", () => {
    const a = newNonce();
    expect(Buffer.from(a, "base64")).toHaveLength(16);
    expect(newNonce()).not.toBe(a);
  });
});

describe("isSameOrigin", () => {
  const req = (h: Record<string, string>) => new Request("http://127.0.0.1:3000/api/x", { method: "POST", headers: h });
  it("compares Origin with NEXTAUTH_URL when set, else with the host", () => {
    const env = { NEXTAUTH_URL: "https://dlq.example.com/" };
    expect(isSameOrigin(req({ origin: "https://dlq.example.com", host: "internal:3000" }), env)).toBe(true);
    expect(isSameOrigin(req({ origin: "http://dlq.example.com", host: "dlq.example.com" }), env)).toBe(false);
    expect(isSameOrigin(req({ origin: "http://127.0.0.1:3000", host: "127.0.0.1:3000" }), {})).toBe(true);
    expect(isSameOrigin(req({ origin: "https://evil.test", host: "127.0.0.1:3000" }), {})).toBe(false);
  });
  it("refuses a missing, opaque or malformed Origin", () => {
    expect(isSameOrigin(req({ host: "127.0.0.1:3000" }), {})).toBe(false);
    expect(isSameOrigin(req({ origin: "null", host: "127.0.0.1:3000" }), {})).toBe(false);
    expect(isSameOrigin(req({ origin: "::", host: "127.0.0.1:3000" }), {})).toBe(false);
  });
});

describe("settings", () => {
  it("uses the __Secure- cookie on https, limits 5 per email and 20 per address in 15 minutes, credentials on unless off", () => {
    expect(sessionCookieName({ NEXTAUTH_URL: "https://x" })).toBe("__Secure-next-auth.session-token");
    expect(sessionCookieName({ NEXTAUTH_URL: "http://x" })).toBe("next-auth.session-token");
    expect(signInLimitPolicy({})).toEqual({ windowMs: 900_000, perEmail: 5, perIp: 20 });
    expect(credentialsEnabled({})).toBe(true);
    expect(credentialsEnabled({ DLQ_AUTH_CREDENTIALS: "off" })).toBe(false);
  });
  it("turns error codes into messages", () => {
    expect(signInErrorMessage("RateLimited:12")).toBe("Too many attempts; try again in 12 minutes.");
    expect(signInErrorMessage("CredentialsSignin")).toBe("Wrong email or password.");
    expect(signInErrorMessage(null)).toBeNull();
  });
});
