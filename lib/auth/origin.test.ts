import { describe, expect, it } from "vitest";
import { mayRunServerAction, originRefusal } from "./origin";

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
