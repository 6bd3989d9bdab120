import { randomBytes } from "node:crypto";
import { Client } from "pg";

/**
 * For integration tests: a uniquely named, empty database on the server of DATABASE_URL (or the
 * local one), and a way to drop it. Tests that damage data on purpose (the audit tamper test) use
 * their own database so they never break the shared one.
 *
 * The console's role (DATABASE_URL in scripts/test.sh) may not create databases or own tables: the
 * database is created, and `url` connects, as the owner (DATABASE_OWNER_URL, else DATABASE_URL);
 * `appUrl` connects to it as DATABASE_URL's role, the way the console would.
 */
export async function createTestDatabase(
  prefix = "dlq_test",
): Promise<{ url: string; appUrl: string; name: string; drop: () => Promise<void> }> {
  const app = new URL(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres");
  const base = new URL(process.env.DATABASE_OWNER_URL ?? app.toString());
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
  const appUrl = new URL(app);
  appUrl.pathname = `/${name}`;
  return {
    url: url.toString(),
    appUrl: appUrl.toString(),
    name,
    drop: () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}
