import { randomBytes } from "node:crypto";
import { Client } from "pg";

/**
 * For integration tests: a uniquely named, empty database on the server of DATABASE_URL (or the
 * local one), and a way to drop it. Tests that damage data on purpose (the audit tamper test) use
 * their own database so they never break the shared one.
 */
export async function createTestDatabase(prefix = "dlq_test"): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const base = new URL(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres");
  const name = `${prefix}_${Date.now()}_${randomBytes(3).toString("hex")}`;
  const admin = new URL(base);
  admin.pathname = "/postgres";
  const run = async (sql: string) => {
    const c = new Client({ connectionString: admin.toString() });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
