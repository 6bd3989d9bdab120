import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * Next's production server loads one server module several times in a process (separate chunks for
 * instrumentation, pages and route handlers). Every copy must reach the one embedded database:
 * a second client would find the PGlite lock its own process holds and refuse every query.
 */
describe("the database module loaded twice in one process", () => {
  let dir: string;
  const saved = { url: process.env.DATABASE_URL, data: process.env.DLQ_CONSOLE_DATA_DIR };

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "dlq-db-copies-"));
    delete process.env.DATABASE_URL;
    process.env.DLQ_CONSOLE_DATA_DIR = path.join(dir, "pglite");
  });

  afterAll(async () => {
    vi.resetModules();
    const { closeDb } = await import("./db");
    await closeDb();
    rmSync(dir, { recursive: true, force: true });
    if (saved.url === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved.url;
    if (saved.data === undefined) delete process.env.DLQ_CONSOLE_DATA_DIR;
    else process.env.DLQ_CONSOLE_DATA_DIR = saved.data;
  });

  async function freshCopy() {
    vi.resetModules();
    return import("./db");
  }

  it("share one PGlite client: both copies query, and a closed client is closed for both", {
    timeout: 60_000,
  }, async () => {
    const first = await freshCopy();
    const second = await freshCopy();
    expect(first).not.toBe(second); // two module instances, as the bundler makes them

    const a = first.getDb();
    const b = second.getDb(); // today's module-level client throws "already open in this process" here
    expect(b).toBe(a);
    const [{ n }] = await b.$queryRaw<{ n: number }[]>`SELECT 41 + 1 AS n`;
    expect(n).toBe(42);

    await second.closeDb();
    const reopened = first.getDb(); // the lock was released by the copy that closed it
    expect(reopened).not.toBe(a);
    const [{ m }] = await reopened.$queryRaw<{ m: number }[]>`SELECT 7 AS m`;
    expect(m).toBe(7);
  });
});
