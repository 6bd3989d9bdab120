import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Client } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { applyMigrations, createMigration, MIGRATIONS_DIR, readMigrationsList, SCHEMA_FILE } from "./migrations";
import { createTestDatabase } from "./test-database";

const folders = readMigrationsList().migrationDirectories.map((d) => d.path);
const sha256 = (name: string) =>
  createHash("sha256")
    .update(readFileSync(path.join(MIGRATIONS_DIR, name, "migration.sql")))
    .digest("hex");

describe("migrations on PostgreSQL", () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const f of cleanup) await f();
  });

  it("applies every folder to a fresh database, then nothing on a re-run", async () => {
    const db = await createTestDatabase("dlq_migrate");
    cleanup.push(db.drop);
    expect(await applyMigrations({ databaseUrl: db.url })).toEqual(folders);
    expect(await applyMigrations({ databaseUrl: db.url })).toEqual([]);

    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query(
        "SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations ORDER BY migration_name",
      );
      expect(rows.map((r) => r.migration_name)).toEqual(folders);
      for (const r of rows) {
        expect(r.checksum).toBe(sha256(r.migration_name)); // what `prisma migrate deploy` checks
        expect(r.finished_at).not.toBeNull();
        expect(r.rolled_back_at).toBeNull();
      }
      // The hand-written plpgsql migration arrived whole (adapter-pg alone splits it on ";").
      const triggers = await c.query(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = 'audit_log'::regclass AND NOT tgisinternal ORDER BY tgname",
      );
      expect(triggers.rows.map((r) => r.tgname)).toEqual(["audit_log_no_truncate", "audit_log_no_update_delete"]);
    } finally {
      await c.end();
    }
  });
});

describe("migrations on embedded PGlite", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "dlq-pglite-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("creates the folder (and its parent), applies, re-runs nothing, and releases its lock", async () => {
    const dataDir = path.join(dir, "nested", "pglite");
    expect(await applyMigrations({ dataDir })).toEqual(folders);
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
    expect(await applyMigrations({ dataDir })).toEqual([]);

    const pg = new PGlite(dataDir);
    try {
      const { rows } = await pg.query<{ migration_name: string; checksum: string }>(
        "SELECT migration_name, checksum FROM _prisma_migrations ORDER BY migration_name",
      );
      expect(rows.map((r) => r.migration_name)).toEqual(folders);
      expect(rows.map((r) => r.checksum)).toEqual(folders.map(sha256));
      await expect(pg.query("DELETE FROM audit_log")).resolves.toBeDefined(); // no rows: no row trigger fires
      await expect(pg.exec("TRUNCATE audit_log")).rejects.toThrow(/append-only/);
    } finally {
      await pg.close();
    }
    // Three PGlite starts and two full migration runs, all WASM on the CPU: a minute on a busy
    // two-core machine (it once timed out at 60 s beside another test run), so it gets three.
  }, 180_000);

  it("refuses a folder another live process holds", async () => {
    const dataDir = path.join(dir, "locked");
    writeFileSync(`${dataDir}.lock`, String(process.ppid)); // a live pid that is not ours
    await expect(applyMigrations({ dataDir })).rejects.toThrow(/locked by pid/);
    writeFileSync(`${dataDir}.lock`, "999999999"); // a dead owner: the stale lock is taken over
    expect(await applyMigrations({ dataDir })).toEqual(folders);
  });
});

describe("creating migrations by diffing schema snapshots", () => {
  it("writes nothing when the schema matches the snapshot, so hand-written SQL is never undone", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "dlq-migrations-"));
    try {
      cpSync(MIGRATIONS_DIR, dir, { recursive: true });
      expect(await createMigration("noop", { dir })).toBeNull();

      const schemaFile = path.join(dir, "schema.prisma");
      writeFileSync(
        schemaFile,
        `${readFileSync(SCHEMA_FILE, "utf8")}\nmodel Probe {\n  id Int @id\n  @@map("probe")\n}\n`,
      );
      const created = await createMigration("add_probe", { dir, schemaFile, now: new Date("2099-01-02T03:04:05Z") });
      expect(created?.folder).toBe("20990102030405_add_probe");
      expect(created?.sql).toContain('CREATE TABLE "probe"');
      expect(created?.sql).not.toMatch(/DROP|audit_log/);
      expect(readFileSync(path.join(dir, ".schema-snapshot.prisma"), "utf8")).toContain("model Probe");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
