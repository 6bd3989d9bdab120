/**
 * npm run db:new-migration -- <name>
 * Writes prisma/migrations/<timestamp>_<name>/migration.sql from the change between the schema
 * snapshot of the last generated migration and prisma/schema.prisma. Needs no database.
 * For hand-written SQL (triggers, functions), create a folder in the same layout by hand instead.
 */
import { createMigration } from "./lib/migrations";

async function main() {
  const name = process.argv[2];
  if (!name) {
    console.error("Usage: npm run db:new-migration -- <name>   (lowercase letters, digits, underscores)");
    process.exit(2);
  }
  const created = await createMigration(name);
  if (!created) {
    console.log("The schema has not changed since the last migration: nothing written.");
    return;
  }
  console.log(`Wrote prisma/migrations/${created.folder}/migration.sql:\n\n${created.sql}`);
}

main().catch((e) => {
  console.error(`Could not create the migration: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
