import { beforeEach, describe, expect, it, vi } from "vitest";
import { AppError } from "@/lib/errors";

const session = vi.hoisted(() => ({ actor: null as null | { id: string; role: string } }));
vi.mock("@/lib/auth/session", () => ({
  requireActor: async () => {
    if (!session.actor)
      throw new AppError("unauthorized:session", { userMessage: "Your session has ended. Sign in again." });
    return session.actor;
  },
  requestMeta: async () => ({ requestId: "r-1", ip: "127.0.0.1", userAgent: "test" }),
}));

const { ok, sessionRoute } = await import("./http");

const ORIGIN = "http://127.0.0.1:3000";
const request = (method: string, headers: Record<string, string> = {}) =>
  new Request(`${ORIGIN}/api/things?x=1`, { method, headers: { host: "127.0.0.1:3000", ...headers } });
const noParams = { params: Promise.resolve({}) };

describe("sessionRoute", () => {
  beforeEach(() => {
    session.actor = { id: "u-1", role: "operator" };
  });

  it("answers the handler's data as { ok, data }, uncached, with the query and path parameters it was given", async () => {
    const route = sessionRoute<{ id: string }>(async ({ search, params, actor }) => ({
      x: search.get("x"),
      id: params.id,
      who: actor.id,
    }));
    const res = await route(request("GET"), { params: Promise.resolve({ id: "job-7" }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ ok: true, data: { x: "1", id: "job-7", who: "u-1" } });
  });

  it("passes a Response of the handler's own through (a status, a download)", async () => {
    const res = await sessionRoute(async () => ok({ started: true }, 202))(request("GET"), noParams);
    expect(res.status).toBe(202);
  });

  it("refuses a change from another site, or with no Origin, before it reads the session or runs anything", async () => {
    const handler = vi.fn(async () => "ran");
    const route = sessionRoute(handler);
    const origins: Array<Record<string, string>> = [{ origin: "https://evil.example" }, { origin: "null" }, {}];
    for (const headers of origins) {
      const res = await route(request("POST", headers), noParams);
      expect(res.status).toBe(403);
      expect((await res.json()).error.code).toBe("forbidden:origin");
    }
    expect(handler).not.toHaveBeenCalled();
    expect((await route(request("POST", { origin: ORIGIN }), noParams)).status).toBe(200);
  });

  it("asks for a session first, and answers errors in the user's words with their status, never a raw exception", async () => {
    session.actor = null;
    const res = await sessionRoute(async () => "data")(request("GET"), noParams);
    expect(res.status).toBe(401);
    session.actor = { id: "u-1", role: "viewer" };
    const refused = await sessionRoute(async () => {
      throw new AppError("forbidden:redrive", { message: "internal detail", userMessage: "You may not redrive." });
    })(request("GET"), noParams);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      ok: false,
      error: { code: "forbidden:redrive", message: "You may not redrive." },
    });
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const crashed = await sessionRoute(async () => {
      throw new Error("connect ECONNREFUSED 10.0.0.7:5432");
    })(request("GET"), noParams);
    spy.mockRestore();
    expect(crashed.status).toBe(500);
    expect(JSON.stringify(await crashed.json())).not.toContain("10.0.0.7");
  });
});
