import "dotenv/config";
import { defineConfig, env } from "prisma/config";

// Prisma 7 reads the datasource URL from here, not from schema.prisma. The console itself does not use
// this file at run time (lib/db.ts reads DATABASE_URL); `prisma generate` and, where Prisma's engines
// can be downloaded, `prisma migrate deploy` do. Offline migrations: scripts/db-migrate.ts.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  // env() throws when the variable is unset, which would break `prisma generate` (the postinstall) on
  // machines that use embedded PGlite, so the datasource is only declared when DATABASE_URL is set.
  ...(process.env.DATABASE_URL ? { datasource: { url: env("DATABASE_URL") } } : {}),
});
