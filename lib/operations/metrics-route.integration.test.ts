import { afterEach, describe, expect, it } from "vitest";
import { AsyncLocalStorage } from "node:async_hooks";
import { ARRIVED_FORWARDED_FOR } from "@/lib/auth/forwarded-headers";
import { v1Users } from "@/test/api-v1";
import { getDb } from "@/lib/db";
import { inRequestScope } from "@/test/request-scope";

/**
 * Who gets figures from GET /api/metrics, with the handler called inside Next's request scope on
 * the real database. Headers are shaped as proxy.ts leaves them: X-Forwarded-For is the socket's
 * peer (Next refills it), and what the client sent is under the ARRIVED name. Signed-in sessions
 * are covered by the authorization matrix (lib/auth/matrix.integration.test.ts).
 */
(globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage ??= AsyncLocalStorage;
process.env.NEXTAUTH_SECRET ||= "metrics-route-test-secret-0123456789abcdef";

const ENV = ["DLQ_METRICS_TOKEN", "DLQ_METRICS_ALLOW", "DLQ_TRUSTED_PROXIES"] as const;
const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
afterEach(() => {
  for (const k of ENV) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});
function env(values: Partial<Record<(typeof ENV)[number], string>>) {
  for (const k of ENV) delete process.env[k];
  Object.assign(process.env, values);
}

async function scrape(h: { peer: string; arrivedFor?: string; authorization?: string }) {
  const headers = new Headers({
    "x-forwarded-for": h.peer,
    "x-request-id": crypto.randomUUID(),
    host: "127.0.0.1:3999",
  });
  if (h.arrivedFor) headers.set(ARRIVED_FORWARDED_FOR, h.arrivedFor);
  if (h.authorization) headers.set("authorization", h.authorization);
  const req = new Request("http://127.0.0.1:3999/api/metrics", { headers });
  const { GET } = await import("@/app/api/metrics/route");
  const res = await inRequestScope(req, () => GET(req));
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

const FIGURES = "# TYPE dlq_console_dlq_depth gauge";

describe("GET /api/metrics access", () => {
  it("refuses an anonymous caller with 401 and no figures, whatever it claims to be", async () => {
    env({ DLQ_METRICS_TOKEN: "scrape-token-0123456789", DLQ_METRICS_ALLOW: "10.0.0.0/8" });
    for (const h of [
      { peer: "203.0.113.9" },
      { peer: "203.0.113.9", authorization: "Bearer wrong" },
      { peer: "203.0.113.9", arrivedFor: "10.1.2.3" },
    ]) {
      const r = await scrape(h);
      expect(r.status, JSON.stringify(h)).toBe(401);
      expect(JSON.parse(r.text)).toMatchObject({ ok: false, error: { code: "unauthorized:session" } });
      expect(r.text).not.toContain("dlq_console_");
    }
  });

  it("lets in the configured bearer token", async () => {
    env({ DLQ_METRICS_TOKEN: "scrape-token-0123456789" });
    const r = await scrape({ peer: "203.0.113.9", authorization: "Bearer scrape-token-0123456789" });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(r.text).toContain(FIGURES);
  });

  it("lets in a peer inside DLQ_METRICS_ALLOW, and a forwarded client only from a trusted proxy", async () => {
    env({ DLQ_METRICS_ALLOW: "10.0.0.0/8, fd00::/8" });
    expect((await scrape({ peer: "10.1.2.3" })).text).toContain(FIGURES);
    expect((await scrape({ peer: "::ffff:10.1.2.3" })).status).toBe(200);
    expect((await scrape({ peer: "fd00::7" })).status).toBe(200);
    expect((await scrape({ peer: "10.1.2.3", arrivedFor: "203.0.113.9" })).status).toBe(200); // not a trusted proxy: its header is not read
    // The client's own X-Forwarded-For is not believed from an untrusted peer...
    expect((await scrape({ peer: "127.0.0.1", arrivedFor: "10.1.2.3" })).status).toBe(401);
    // ...and is, from a trusted proxy; that proxy's own address does not open the check.
    env({ DLQ_METRICS_ALLOW: "10.0.0.0/8", DLQ_TRUSTED_PROXIES: "127.0.0.1" });
    expect((await scrape({ peer: "127.0.0.1", arrivedFor: "10.1.2.3" })).status).toBe(200);
    expect((await scrape({ peer: "127.0.0.1", arrivedFor: "203.0.113.9" })).status).toBe(401);
    env({ DLQ_METRICS_ALLOW: "127.0.0.1", DLQ_TRUSTED_PROXIES: "127.0.0.1" });
    expect((await scrape({ peer: "127.0.0.1", arrivedFor: "203.0.113.9" })).status).toBe(401);
  });

  it("lets in a personal API token of a role with ops:read, attributed to the token; refuses a revoked one", async () => {
    env({ DLQ_METRICS_TOKEN: "scrape-token-0123456789" });
    const { viewer } = await v1Users("metrics-token", ["viewer"] as const);
    const ok = await scrape({ peer: "203.0.113.9", authorization: `Bearer ${viewer.token}` });
    expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    expect(ok.text).toContain(FIGURES);
    const used = await getDb().apiToken.findUniqueOrThrow({ where: { id: viewer.tokenId } });
    expect(used.lastUsedAt).not.toBeNull();
    await getDb().apiToken.update({ where: { id: viewer.tokenId }, data: { revokedAt: new Date() } });
    const refused = await scrape({ peer: "203.0.113.9", authorization: `Bearer ${viewer.token}` });
    expect(refused.status).toBe(401);
    expect(refused.text).not.toContain("dlq_console_");
  });
});
