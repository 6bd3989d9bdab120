/**
 * npm run db:migrate
 * Applies prisma/migrations to DATABASE_URL, or, when it is unset, to the embedded PGlite database
 * (DLQ_CONSOLE_DATA_DIR, default .data/pglite). Run it before the console starts: a PGlite folder
 * has one owner at a time, and this command refuses to run while the console holds it.
 */
import "dotenv/config";
import { applyMigrations, defaultTarget } from "./lib/migrations";

async function main() {
  const target = defaultTarget();
  const where = "databaseUrl" in target ? redact(target.databaseUrl) : `embedded PGlite at ${target.dataDir}`;
  const applied = await applyMigrations(target);
  if (applied.length === 0) console.log(`Database is up to date (${where}).`);
  else console.log(`Applied ${applied.length} migration(s) to ${where}:\n  ${applied.join("\n  ")}`);
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "DATABASE_URL";
  }
}

main().catch((e) => {
  const msg =
    e && typeof e === "object" && "userMessage" in e
      ? String((e as { userMessage: unknown }).userMessage)
      : e instanceof Error
        ? e.message
        : String(e);
  console.error(`Migration failed: ${msg}`);
  process.exit(1);
});
