import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations } from "@/scripts/lib/migrations";
import { createTestDatabase } from "@/scripts/lib/test-database";
import { closeDb } from "@/lib/db";
import { checkpointAuditChain } from "./checkpoint-task";
import { auditHash, auditMac, canonicalJson, GENESIS_HASH } from "./hash";
import { recordAudit, verifyAuditChain, type AuditEntry } from "./index";

/**
 * Someone who holds the database (the owner role, or the console's own role) against the audit
 * chain. The console connects as dlq_console (a member of dlq_console_app), as scripts/test.sh runs
 * the suite; the attacker is the owner, who can switch the trigger off. Each case has its own
 * database and checkpoint file, since each breaks the chain on purpose.
 */
const sharedUrl = process.env.DATABASE_URL;
const sharedCheckpoints = process.env.DLQ_AUDIT_CHECKPOINTS;
const sharedOwnerUrl = process.env.DATABASE_OWNER_URL;
const dir = mkdtempSync(path.join(tmpdir(), "dlq-audit-tamper-"));
const cleanups: Array<() => Promise<unknown>> = [];

const entry = (i: number): AuditEntry => ({
  actor: { id: "u-1", email: "alice@example.com", role: "admin" },
  action: "letter.view",
  outcome: "success",
  queue: "orders.dlq",
  target: `msg-${i}`,
  details: { i },
});

beforeAll(async () => {
  // DATABASE_URL is switched to the console's role below: databases are created as the owner.
  process.env.DATABASE_OWNER_URL = sharedOwnerUrl ?? sharedUrl;
  const admin = new Client({ connectionString: process.env.DATABASE_OWNER_URL });
  await admin.connect();
  try {
    // The same login scripts/test.sh creates (scripts/sh/common.sh ensure_console_role).
    await admin.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dlq_console_app') THEN CREATE ROLE dlq_console_app NOLOGIN; END IF;
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dlq_console') THEN CREATE ROLE dlq_console LOGIN IN ROLE dlq_console_app; END IF;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`);
  } finally {
    await admin.end();
  }
});

afterEach(async () => {
  await closeDb();
  for (const c of cleanups.splice(0).reverse()) await c();
});

afterAll(() => {
  process.env.DATABASE_URL = sharedUrl;
  process.env.DLQ_AUDIT_CHECKPOINTS = sharedCheckpoints;
  if (sharedOwnerUrl === undefined) delete process.env.DATABASE_OWNER_URL;
  else process.env.DATABASE_OWNER_URL = sharedOwnerUrl;
  rmSync(dir, { recursive: true, force: true });
});

/** A migrated database with `rows` rows written by the console (as dlq_console), verified once (so checkpointed). */
async function chain(rows: number) {
  const db = await createTestDatabase("dlq_audit_tamper");
  await applyMigrations({ databaseUrl: db.url });
  const app = new URL(db.url);
  app.username = "dlq_console";
  app.password = "";
  const owner = new Client({ connectionString: db.url });
  await owner.connect();
  const file = path.join(dir, `${db.name}.jsonl`);
  cleanups.push(
    () => db.drop(),
    () => owner.end(),
  );
  process.env.DATABASE_URL = app.toString();
  process.env.DLQ_AUDIT_CHECKPOINTS = file;
  for (let i = 0; i < rows; i++) await recordAudit(entry(i));
  const first = await verifyAuditChain();
  expect(first).toMatchObject({ ok: true, checked: rows, checkpoints: { written: true } });
  return { owner, appUrl: app.toString(), file };
}

type Row = {
  id: string;
  operation_id: string;
  scope: string;
  at: Date;
  actor_id: string | null;
  actor_email: string | null;
  actor_role: string | null;
  action: string;
  outcome: string;
  connection_id: string | null;
  queue: string | null;
  target: string | null;
  request_id: string | null;
  ip: string | null;
  details: Record<string, unknown> | null;
  prev_hash: string;
  hash: string;
};

const fieldsOf = (r: Row, prevHash: string) => ({
  prevHash,
  operationId: r.operation_id,
  scope: r.scope,
  at: r.at.toISOString(),
  actorId: r.actor_id,
  actorEmail: r.actor_email,
  actorRole: r.actor_role,
  action: r.action,
  outcome: r.outcome as "success",
  connectionId: r.connection_id,
  queue: r.queue,
  target: r.target,
  requestId: r.request_id,
  ip: r.ip,
  details: r.details,
});

/**
 * As the owner: trigger off, change `outcome` of the row at `fromIndex`, and re-chain it and every
 * later row with `link` (what a forger can compute), trigger back on.
 */
async function rewrite(
  owner: Client,
  fromIndex: number,
  link: (f: ReturnType<typeof fieldsOf>) => { hash: string; keyId: string | null },
) {
  const { rows } = await owner.query<Row>("SELECT *, id::text AS id FROM audit_log ORDER BY audit_log.id");
  await owner.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete");
  let prev = fromIndex === 0 ? GENESIS_HASH : rows[fromIndex - 1].hash;
  for (let i = fromIndex; i < rows.length; i++) {
    const r = { ...rows[i], outcome: i === fromIndex ? "denied" : rows[i].outcome };
    const { hash, keyId } = link(fieldsOf(r, prev));
    await owner.query("UPDATE audit_log SET outcome = $2, prev_hash = $3, hash = $4, key_id = $5 WHERE id = $1", [
      r.id,
      r.outcome,
      prev,
      hash,
      keyId,
    ]);
    prev = hash;
  }
  await owner.query("ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update_delete");
  return rows.map((r) => r.id);
}

describe("the console's database role", () => {
  it("may read and append the audit log, and nothing else: UPDATE, DELETE, TRUNCATE, ALTER and DROP TRIGGER are refused", async () => {
    const { appUrl } = await chain(3);
    const app = new Client({ connectionString: appUrl });
    await app.connect();
    cleanups.push(() => app.end());
    expect((await app.query("SELECT count(*)::int AS n FROM audit_log")).rows[0].n).toBe(3);
    for (const stmt of [
      "UPDATE audit_log SET outcome = 'denied'",
      "DELETE FROM audit_log",
      "TRUNCATE audit_log",
      "ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete",
      "ALTER TABLE audit_log DISABLE TRIGGER ALL",
      "DROP TRIGGER audit_log_no_update_delete ON audit_log",
      "ALTER TABLE audit_log ADD COLUMN forged text",
      "DROP TABLE audit_log",
      "CREATE OR REPLACE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
      "DELETE FROM _prisma_migrations",
    ]) {
      await expect(app.query(stmt), stmt).rejects.toThrow(/permission denied|must be owner/);
    }
    // Still the console's ordinary work on other tables.
    const { rows } = await app.query(
      "INSERT INTO sign_in_attempts (outcome) VALUES ('pending') RETURNING id::text AS id",
    );
    await app.query("UPDATE sign_in_attempts SET outcome = 'failure' WHERE id = $1", [rows[0].id]);
    expect((await app.query("DELETE FROM sign_in_attempts WHERE id = $1", [rows[0].id])).rowCount).toBe(1);
    expect(await verifyAuditChain()).toMatchObject({ ok: true, checked: 3 });
  });
});

describe("the owner, with the trigger switched off", () => {
  it("rewrites a row and re-chains the rest with the unkeyed sha256: caught at that row", async () => {
    const { owner } = await chain(6);
    const ids = await rewrite(owner, 3, (f) => ({ hash: auditHash(f), keyId: null }));
    const r = await verifyAuditChain(4);
    expect(r).toMatchObject({ ok: false, checked: 3, brokenAt: { id: ids[3] } });
    expect(r.brokenAt?.reason).toMatch(/unkeyed hash after rows chained with the audit key/);
  });

  it("re-chains the whole log with the unkeyed sha256 from the first row: caught by the checkpoint", async () => {
    const { owner } = await chain(5);
    const ids = await rewrite(owner, 0, (f) => ({ hash: auditHash(f), keyId: null }));
    const r = await verifyAuditChain();
    expect(r).toMatchObject({ ok: false, brokenAt: { id: ids[4] } });
    expect(r.brokenAt?.reason).toMatch(/is not the one checkpoint line 1 .* recorded: the log was rewritten/);
  });

  it("re-chains with an HMAC under a key of its own (even naming the console's key id): caught at that row", async () => {
    const { owner } = await chain(6);
    const wrong = randomBytes(32);
    const keyId = (await owner.query("SELECT key_id FROM audit_log LIMIT 1")).rows[0].key_id as string;
    const ids = await rewrite(owner, 2, (f) => ({ hash: auditMac(f, keyId, wrong), keyId }));
    const r = await verifyAuditChain();
    expect(r).toMatchObject({ ok: false, checked: 2, brokenAt: { id: ids[2] } });
    expect(r.brokenAt?.reason).toMatch(/do not match its MAC/);
  });

  it("cuts rows off the end: caught against the checkpoint", async () => {
    const { owner } = await chain(7);
    await owner.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete");
    await owner.query("DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log ORDER BY id DESC LIMIT 3)");
    const r = await verifyAuditChain();
    expect(r).toMatchObject({ ok: false, checked: 4, brokenAt: { id: null } });
    expect(r.brokenAt?.reason).toMatch(
      /the log ends at row \d+ \(4 rows\), but checkpoint line 1 .* recorded 7 rows .*: rows were cut off the end/,
    );
  });

  it("empties the table (TRUNCATE with the trigger off): caught against the checkpoint", async () => {
    const { owner } = await chain(4);
    await owner.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_truncate");
    await owner.query("TRUNCATE audit_log");
    const r = await verifyAuditChain();
    expect(r).toMatchObject({ ok: false, checked: 0, brokenAt: { id: null } });
    expect(r.brokenAt?.reason).toMatch(
      /the audit log is empty, but checkpoint line 1 .* recorded 4 row\(s\).*emptied or the database replaced/,
    );
  });
});

describe("checkpoints", () => {
  it("a forged checkpoint line is reported; the worker's checkpoint verifies what was added and refuses a broken head", async () => {
    const { owner, file } = await chain(3);
    expect(await checkpointAuditChain({ everyRows: 1 })).toBe("up-to-date");
    await recordAudit(entry(3));
    await recordAudit(entry(4));
    expect(await checkpointAuditChain({ everyRows: 10, everyMinutes: 10 })).toBe("not-due");
    expect(await checkpointAuditChain({ everyRows: 2 })).toBe("written");
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.count)).toEqual([3, 5]);
    expect(await verifyAuditChain()).toMatchObject({
      ok: true,
      checked: 5,
      checkpoints: { checked: 2, written: false },
    });

    // A newer head, "signed" by someone without the key.
    const forged = { ...lines[1], lastId: "999", count: 999 };
    appendFileSync(file, `${canonicalJson(forged)}\n`);
    const r = await verifyAuditChain();
    expect(r).toMatchObject({ ok: false, brokenAt: { id: null } });
    expect(r.brokenAt?.reason).toMatch(/line 3 of .* is not a checkpoint signed with this console's audit key/);

    await owner.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete");
    await owner.query("UPDATE audit_log SET outcome = 'denied' WHERE id = (SELECT max(id) FROM audit_log)");
    await recordAudit(entry(5));
    expect(await checkpointAuditChain({ everyRows: 1 })).toBe("broken");
  });
});
