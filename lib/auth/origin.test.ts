import { describe, expect, it } from "vitest";
import {
  assertSameOrigin,
  isSessionRouteChange,
  mayRunServerAction,
  mustComeFromConsole,
  originRefusal,
} from "./origin";

const req = (method: string, path: string, h: Record<string, string> = {}) =>
  new Request(`http://127.0.0.1:3000${path}`, { method, headers: { host: "127.0.0.1:3000", ...h } });

describe("originRefusal", () => {
  it("names why an Origin is not the console's own: none, the opaque null, another site's", () => {
    expect(originRefusal(req("POST", "/profile"), {})).toBe("missing");
    expect(originRefusal(req("POST", "/profile", { origin: "" }), {})).toBe("missing");
    expect(originRefusal(req("POST", "/profile", { origin: "null" }), {})).toBe("null");
    expect(originRefusal(req("POST", "/profile", { origin: "https://evil.example" }), {})).toBe("foreign");
    expect(originRefusal(req("POST", "/profile", { origin: "not a url" }), {})).toBe("foreign");
    expect(originRefusal(req("POST", "/profile", { origin: "http://127.0.0.1:3000" }), {})).toBeNull();
  });

  it("follows NEXTAUTH_URL when it is set, as route handlers do", () => {
    const env = { NEXTAUTH_URL: "https://dlq.example.com" };
    expect(originRefusal(req("POST", "/profile", { origin: "https://dlq.example.com" }), env)).toBeNull();
    expect(originRefusal(req("POST", "/profile", { origin: "http://127.0.0.1:3000" }), env)).toBe("foreign");
  });
});

describe("mayRunServerAction", () => {
  it("is any POST with a Next-Action header, and any POST to a page", () => {
    expect(mayRunServerAction(req("POST", "/profile", { "next-action": "40ab" }), "/profile")).toBe(true);
    expect(mayRunServerAction(req("POST", "/api/v1/dlqs", { "next-action": "40ab" }), "/api/v1/dlqs")).toBe(true);
    // A form's action posts multipart to the page itself, the action's id in the body.
    expect(mayRunServerAction(req("POST", "/admin/users"), "/admin/users")).toBe(true);
    expect(mayRunServerAction(req("POST", "/"), "/")).toBe(true);
    expect(mayRunServerAction(req("POST", "/apis"), "/apis")).toBe(true);
  });

  it("leaves reads and route handlers' own POSTs alone", () => {
    expect(mayRunServerAction(req("GET", "/profile"), "/profile")).toBe(false);
    expect(mayRunServerAction(req("HEAD", "/profile"), "/profile")).toBe(false);
    expect(mayRunServerAction(req("POST", "/api/redrive/plan"), "/api/redrive/plan")).toBe(false);
    expect(mayRunServerAction(req("POST", "/api/auth/callback/credentials"), "/api/auth/callback/credentials")).toBe(
      false,
    );
  });
});

describe("isSessionRouteChange", () => {
  it("is every changing method under /api/ that a session cookie can drive", () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(isSessionRouteChange(req(method, "/api/redrive/plan"), "/api/redrive/plan")).toBe(true);
    }
    expect(isSessionRouteChange(req("POST", "/api/discard/j1/cancel"), "/api/discard/j1/cancel")).toBe(true);
    expect(isSessionRouteChange(req("POST", "/api"), "/api")).toBe(true);
  });

  it("leaves reads, the token-only v1 API and Auth.js's own routes alone", () => {
    expect(isSessionRouteChange(req("GET", "/api/triage/groups"), "/api/triage/groups")).toBe(false);
    expect(isSessionRouteChange(req("HEAD", "/api/health"), "/api/health")).toBe(false);
    expect(isSessionRouteChange(req("POST", "/api/v1/redrives"), "/api/v1/redrives")).toBe(false);
    expect(isSessionRouteChange(req("POST", "/api/auth/callback/oidc"), "/api/auth/callback/oidc")).toBe(false);
    expect(isSessionRouteChange(req("POST", "/api/auth/csp-report"), "/api/auth/csp-report")).toBe(false);
    // Look-alike prefixes are not the exempt folders.
    expect(isSessionRouteChange(req("POST", "/api/v10/x"), "/api/v10/x")).toBe(true);
    expect(isSessionRouteChange(req("POST", "/api/authz"), "/api/authz")).toBe(true);
    expect(isSessionRouteChange(req("POST", "/apis"), "/apis")).toBe(false);
  });
});

describe("mustComeFromConsole", () => {
  it("covers server actions and session route changes, nothing else", () => {
    expect(mustComeFromConsole(req("POST", "/profile"), "/profile")).toBe(true);
    expect(mustComeFromConsole(req("DELETE", "/api/triage/scans/s1"), "/api/triage/scans/s1")).toBe(true);
    expect(mustComeFromConsole(req("POST", "/api/v1/scans"), "/api/v1/scans")).toBe(false);
    expect(mustComeFromConsole(req("GET", "/profile"), "/profile")).toBe(false);
  });
});

describe("assertSameOrigin", () => {
  const req = (h: Record<string, string>) =>
    new Request("http://127.0.0.1:3000/api/triage/scans", { method: "POST", headers: h });
  it("accepts the console's own origin", () => {
    expect(() => assertSameOrigin(req({ host: "127.0.0.1:3000", origin: "http://127.0.0.1:3000" }))).not.toThrow();
  });
  it("refuses another origin or none", () => {
    expect(() => assertSameOrigin(req({ host: "127.0.0.1:3000", origin: "https://evil.test" }))).toThrow(
      expect.objectContaining({ code: "forbidden:origin" }),
    );
    expect(() => assertSameOrigin(req({ host: "127.0.0.1:3000" }))).toThrow(
      expect.objectContaining({ code: "forbidden:origin" }),
    );
  });
});
