import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { testConfig as rabbitConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { checkReadiness } from "./health";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * Liveness and readiness on the real Postgres and RabbitMQ, with a broker that refuses connections
 * (a closed port) and one that accepts them and never answers (a silent TCP server), configured
 * as the console would read them (DLQ_CONSOLE_CONFIG).
 */

/** Accepts connections and says nothing: what a hung broker or database looks like from here. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("error", () => undefined);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A port nothing listens on (taken, then freed). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

let silent: Awaited<ReturnType<typeof silentServer>>;
let refused: number;
let dir: string;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  silent = await silentServer();
  refused = await closedPort();
  dir = mkdtempSync(path.join(tmpdir(), "dlq-ready-"));
  const config = {
    connections: [
      rabbitConfig({ id: "ready-up", discover: false }),
      rabbitConfig({ id: "ready-refused", url: `amqp://127.0.0.1:${refused}`, management: undefined, discover: false }),
      rabbitConfig({
        id: "ready-hung",
        url: `amqp://127.0.0.1:${silent.port}`,
        management: undefined,
        discover: false,
      }),
    ],
  };
  writeFileSync(path.join(dir, "config.json"), JSON.stringify(config));
  process.env.DLQ_CONSOLE_CONFIG = path.join(dir, "config.json");
  const { resetConfigCache } = await import("@/lib/config");
  resetConfigCache();
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
  await silent?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("GET /api/health (liveness)", () => {
  it("answers 200 with nothing but that the process is up", async () => {
    const { GET } = await import("@/app/api/health/route");
    const res = GET();
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ status: "ok" });
  });
});

describe("GET /api/ready (readiness)", () => {
  it("is ready with the database up, names each broker that does not answer by code only, and answers within the check timeout", async () => {
    const { GET } = await import("@/app/api/ready/route");
    // One call first opens the database pool and the brokers' connections: a probe asks every few
    // seconds, and on a busy machine these first connections alone once took longer than the 2 s
    // each check is given (CI on a machine under load, "unavailable:database").
    await GET();
    const started = Date.now();
    const res = await GET();
    const took = Date.now() - started;
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.status).toBe("degraded");
    expect(body.database).toEqual({ ok: true, error: null });
    expect(body.brokers).toEqual([
      { connectionId: "ready-up", kind: "rabbitmq", ok: true, error: null },
      { connectionId: "ready-refused", kind: "rabbitmq", ok: false, error: "unavailable:broker" },
      { connectionId: "ready-hung", kind: "rabbitmq", ok: false, error: "unavailable:broker" },
    ]);
    // The hung broker is cut off at the timeout (2 s), not waited for.
    expect(took).toBeLessThan(4_000);
    const raw = JSON.stringify(body);
    for (const leak of ["127.0.0.1", String(refused), String(silent.port), "amqp", "ECONNREFUSED", "timed out", "5432"])
      expect(raw).not.toContain(leak);
  });

  it("is down when the database does not answer (refused or hung), and says so by code", async () => {
    const up = new RabbitMqAdapter(rabbitConfig({ id: "ready-up-2", discover: false }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    cleanups.push(() => up.close());
    // Connected once beforehand: the 500 ms budget below is for the checks, not for a first AMQP
    // handshake, which a loaded machine can take longer than that over.
    await up.ping();
    for (const port of [refused, silent.port]) {
      const db = new PrismaClient({
        adapter: new PrismaPg({ connectionString: `postgresql://postgres@127.0.0.1:${port}/none` }),
      });
      const started = Date.now();
      const r = await checkReadiness({ db, adapters: [up], timeoutMs: 500 });
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(r.status).toBe("down");
      expect(r.database).toEqual({ ok: false, error: "unavailable:database" });
      expect(r.brokers).toEqual([{ connectionId: "ready-up-2", kind: "rabbitmq", ok: true, error: null }]);
      void db.$disconnect().catch(() => undefined);
    }
  });

  it("is ok when the database and every broker answer", async () => {
    const up = new RabbitMqAdapter(rabbitConfig({ id: "ready-up-3", discover: false }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    cleanups.push(() => up.close());
    const { getDb } = await import("@/lib/db");
    const r = await checkReadiness({ db: getDb(), adapters: [up] });
    expect(r).toMatchObject({
      status: "ok",
      database: { ok: true },
      brokers: [{ connectionId: "ready-up-3", ok: true }],
    });
  });
});
