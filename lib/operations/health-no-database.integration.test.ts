import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The console's own database is unreachable (DATABASE_URL names a port nothing listens on, set
 * before anything opens the database): liveness still answers 200, readiness answers 503 with the
 * code only. Its own file, because the process keeps one database client for its life.
 */
let port: number;
beforeAll(async () => {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  process.env.DATABASE_URL = `postgresql://postgres@127.0.0.1:${port}/dlq_unreachable`;
  // Readiness also asks each configured broker: here, the default local connections.
  process.env.DLQ_CONSOLE_CONFIG = "/nonexistent/dlq-console.config.json";
});

afterAll(async () => {
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

describe("without a database", () => {
  it("GET /api/health still answers 200: liveness reads no database", async () => {
    const { GET } = await import("@/app/api/health/route");
    const res = GET();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("GET /api/ready answers 503, naming the database by code and leaking no address", async () => {
    const { GET } = await import("@/app/api/ready/route");
    const res = await GET();
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body.status).toBe("down");
    expect(body.database).toEqual({ ok: false, error: "unavailable:database" });
    const raw = JSON.stringify(body);
    for (const leak of [String(port), "127.0.0.1", "postgresql", "dlq_unreachable", "ECONNREFUSED"])
      expect(raw).not.toContain(leak);
  });
});
