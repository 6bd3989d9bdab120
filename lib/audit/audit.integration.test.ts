import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations } from "@/scripts/lib/migrations";
import { createTestDatabase } from "@/scripts/lib/test-database";
import { closeDb, getDb } from "@/lib/db";
import { auditFields, insertChained } from "./batch";
import { auditKeyring } from "./key";
import {
  GENESIS_HASH,
  auditHash,
  auditMac,
  queryAudit,
  recordAudit,
  recordAuditBatch,
  streamAudit,
  verifyAuditChain,
  type AuditEntry,
} from "./index";

// Own database: the tamper test breaks the chain on purpose, which must not leak into other suites.
const sharedUrl = process.env.DATABASE_URL;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Client;

beforeAll(async () => {
  db = await createTestDatabase("dlq_audit");
  await applyMigrations({ databaseUrl: db.url });
  await closeDb();
  process.env.DATABASE_URL = db.appUrl; // the console's role under scripts/test.sh; `sql` is the owner
  sql = new Client({ connectionString: db.url });
  await sql.connect();
});

afterAll(async () => {
  await sql?.end();
  await closeDb();
  process.env.DATABASE_URL = sharedUrl;
  await db?.drop();
});

const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  actor: { id: "u-1", email: "Alice@Example.com", role: "operator" },
  action: "letter.view",
  outcome: "success",
  connectionId: "local-rabbitmq",
  queue: "orders.dlq",
  target: "msg-1",
  requestId: "req-1",
  ip: "127.0.0.1",
  details: { occurrence: 1 },
  ...over,
});

describe("audit log on PostgreSQL", () => {
  it("chains rows: the first links to 64 zeros, each next to the previous hash", async () => {
    const a = await recordAudit(entry({ action: "auth.sign_in", queue: null, target: null }));
    const b = await recordAudit(entry());
    const { rows } = await queryAudit({}, { limit: 10 });
    expect(rows.map((r) => r.id)).toEqual([b.id, a.id]);
    expect(rows[1].prevHash).toBe(GENESIS_HASH);
    expect(rows[0].prevHash).toBe(a.hash);
    expect(rows[0].actorEmail).toBe("alice@example.com");
    expect(rows[0].details).toEqual({ occurrence: 1 });
    expect(rows[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await verifyAuditChain()).toMatchObject({ ok: true, checked: 2 });
  });

  it("keeps one unbroken chain under 20 concurrent writers", async () => {
    const before = (await verifyAuditChain()).checked;
    const written = await Promise.all(
      Array.from({ length: 20 }, (_, i) => recordAudit(entry({ target: `msg-${i}`, details: { i, text: 'é,"x"\n' } }))),
    );
    expect(new Set(written.map((w) => w.hash)).size).toBe(20);
    const { rows } = await sql.query(
      "SELECT prev_hash, count(*)::int AS n FROM audit_log GROUP BY prev_hash HAVING count(*) > 1",
    );
    expect(rows).toEqual([]); // no two rows share a predecessor: no fork
    expect(await verifyAuditChain(7)).toMatchObject({ ok: true, checked: before + 20 }); // small batches cross batch edges
  });

  it("shares an operation id between an operation and its per-letter rows", async () => {
    const op = await recordAudit(entry({ action: "redrive.start" }));
    await recordAudit(entry({ action: "letter.redrive", operationId: op.operationId, scope: "letter" }));
    const { rows } = await sql.query("SELECT scope FROM audit_log WHERE operation_id = $1 ORDER BY id", [
      op.operationId,
    ]);
    expect(rows.map((r) => r.scope)).toEqual(["operation", "letter"]);
  });

  it("refuses UPDATE, DELETE and TRUNCATE with the trigger's error", async () => {
    await expect(sql.query("UPDATE audit_log SET outcome = 'failure'")).rejects.toThrow(/append-only: UPDATE refused/);
    await expect(sql.query("DELETE FROM audit_log")).rejects.toThrow(/append-only: DELETE refused/);
    await expect(sql.query("TRUNCATE audit_log")).rejects.toThrow(/append-only: TRUNCATE refused/);
  });

  it("filters by actor, action (exact and prefix), queue, outcome and time; pages by keyset", async () => {
    await new Promise((r) => setTimeout(r, 5)); // earlier rows must be strictly older than t0
    const t0 = new Date();
    await recordAudit(
      entry({
        actor: { id: "u-2", email: "bob@corp.test", role: "viewer" },
        action: "auth.sign_in_failed",
        outcome: "failure",
        queue: null,
      }),
    );
    await recordAudit(
      entry({
        actor: { id: "u-2", email: "bob@corp.test", role: "viewer" },
        action: "dlq.open",
        outcome: "denied",
        queue: "payments.dlq",
      }),
    );
    await recordAudit(
      entry({ actor: { id: "u-2", email: "bob@corp.test", role: "viewer" }, action: "auth.sign_out", queue: null }),
    );

    const byActor = await queryAudit({ actor: "BOB@corp" }, { limit: 50 });
    expect(byActor.rows.map((r) => r.action)).toEqual(["auth.sign_out", "dlq.open", "auth.sign_in_failed"]);
    expect((await queryAudit({ actor: "bob", action: "auth." }, { limit: 50 })).rows).toHaveLength(2);
    expect((await queryAudit({ actor: "bob", action: "auth.*" }, { limit: 50 })).rows).toHaveLength(2);
    expect((await queryAudit({ action: "auth.sign_in" }, { limit: 50 })).rows.map((r) => r.actorEmail)).toEqual([
      "alice@example.com",
    ]);
    expect((await queryAudit({ queue: "payments.dlq" }, { limit: 50 })).rows.map((r) => r.outcome)).toEqual(["denied"]);
    expect((await queryAudit({ outcome: "failure" }, { limit: 50 })).rows.map((r) => r.action)).toEqual([
      "auth.sign_in_failed",
    ]);
    expect((await queryAudit({ from: t0 }, { limit: 50 })).rows).toHaveLength(3);
    expect(
      (await queryAudit({ to: new Date(t0.getTime() - 1) }, { limit: 500 })).rows.every(
        (r) => r.actorEmail === "alice@example.com",
      ),
    ).toBe(true);

    const all = (await queryAudit({}, { limit: 1000 })).rows.map((r) => r.id);
    const paged: string[] = [];
    let before: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await queryAudit({}, { before, limit: 4 });
      paged.push(...page.rows.map((r) => r.id));
      pages++;
      if (!page.nextCursor) break;
      before = page.nextCursor;
    }
    expect(paged).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 4));
    expect(all).toEqual([...all].sort((a, b) => Number(b) - Number(a)));

    const streamed: string[] = [];
    for await (const r of streamAudit({}, 3)) streamed.push(r.id);
    expect(streamed).toEqual(all);
    await expect(queryAudit({}, { before: "1; drop", limit: 5 })).rejects.toThrow(/cursor/);
  });

  it("writes a batch in one transaction, chained in order exactly as single rows would be", async () => {
    const before = (await verifyAuditChain()).checked;
    const last = (await queryAudit({}, { limit: 1 })).rows[0];
    const op = await recordAudit(entry({ action: "redrive.start" }));
    const written = await recordAuditBatch(
      Array.from({ length: 5500 }, (_, i) =>
        entry({
          action: "letter.redrive",
          scope: "letter",
          operationId: op.operationId,
          target: `l-${i}`,
          details: { i, reason: i % 2 ? null : "x\u0000y" },
        }),
      ),
    ); // > one INSERT chunk (5,000 rows)
    expect(written).toHaveLength(5500);
    expect(written.map((w) => BigInt(w.id))).toEqual(
      [...written.map((w) => BigInt(w.id))].sort((a, b) => (a < b ? -1 : 1)),
    );
    const { rows } = await sql.query(
      "SELECT id::text AS id, prev_hash, hash, target FROM audit_log WHERE audit_log.id > $1 ORDER BY audit_log.id",
      [last.id],
    );
    expect(rows[0].prev_hash).toBe(last.hash);
    expect(rows[1].prev_hash).toBe(op.hash);
    expect(rows.slice(1).map((r) => r.target)).toEqual(Array.from({ length: 5500 }, (_, i) => `l-${i}`));
    const page = (await queryAudit({ action: "letter.redrive" }, { limit: 1 })).rows[0];
    const { id: _id, hash, keyId, ...fields } = page;
    expect(keyId).toBe(auditKeyring().currentId);
    expect(auditMac(fields, keyId!, auditKeyring().keys.get(keyId!)!)).toBe(hash);
    expect(auditHash(fields)).not.toBe(hash); // not the unkeyed sha256 anyone could recompute
    expect(page.details).toEqual({ i: 5499, reason: null });
    expect(await recordAuditBatch([])).toEqual([]);
    expect(await verifyAuditChain(333)).toMatchObject({ ok: true, checked: before + 5501 });
  });

  it("keeps one chain with batch writers and single-row writers racing", async () => {
    const before = (await verifyAuditChain()).checked;
    const jobs: Array<Promise<unknown>> = [];
    for (let i = 0; i < 10; i++) {
      jobs.push(
        recordAuditBatch(Array.from({ length: 50 }, (_, k) => entry({ scope: "letter", target: `b${i}-${k}` }))),
      );
      jobs.push(recordAudit(entry({ target: `s-${i}` })), recordAudit(entry({ target: `t-${i}` })));
    }
    await Promise.all(jobs);
    const { rows } = await sql.query(
      "SELECT prev_hash, count(*)::int AS n FROM audit_log GROUP BY prev_hash HAVING count(*) > 1",
    );
    expect(rows).toEqual([]);
    // Each batch is contiguous in the chain: no single row lands inside one.
    const b = await sql.query(
      "SELECT target FROM audit_log WHERE target LIKE 'b%-%' OR target LIKE 's-%' OR target LIKE 't-%' ORDER BY id DESC LIMIT 520",
    );
    const seq = b.rows.map((r) => String(r.target)).reverse();
    for (let i = 0; i < 10; i++) {
      const at = seq.indexOf(`b${i}-0`);
      expect(seq.slice(at, at + 50)).toEqual(Array.from({ length: 50 }, (_, k) => `b${i}-${k}`));
    }
    expect(await verifyAuditChain(64)).toMatchObject({ ok: true, checked: before + 520 });
  });

  it("detects a row changed behind the trigger's back, at exactly that row", async () => {
    const { rows } = await sql.query("SELECT id::text AS id FROM audit_log ORDER BY audit_log.id LIMIT 1 OFFSET 5");
    const victim = rows[0].id as string;
    await sql.query("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete");
    try {
      await sql.query("UPDATE audit_log SET outcome = 'denied' WHERE id = $1", [victim]);
    } finally {
      await sql.query("ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update_delete");
    }
    const result = await verifyAuditChain(4);
    expect(result.ok).toBe(false);
    expect(result.brokenAt?.id).toBe(victim);
    expect(result.checked).toBe(5);
    expect(result.brokenAt?.reason).toMatch(/changed/);
  });
});

describe("audit log on embedded PGlite", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "dlq-audit-pglite-"));
  afterAll(async () => {
    await closeDb();
    delete process.env.DLQ_CONSOLE_DATA_DIR;
    process.env.DATABASE_URL = db.url;
    rmSync(dir, { recursive: true, force: true });
  });

  it("chains concurrent writes and verifies", async () => {
    const dataDir = path.join(dir, "pglite");
    await applyMigrations({ dataDir });
    await closeDb();
    delete process.env.DATABASE_URL;
    process.env.DLQ_CONSOLE_DATA_DIR = dataDir;
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => recordAudit(entry({ target: `m-${i}` }))),
      recordAuditBatch(Array.from({ length: 20 }, (_, i) => entry({ scope: "letter", target: `b-${i}` }))),
    ]);
    expect(await verifyAuditChain(3)).toMatchObject({ ok: true, checked: 30 });
    // The embedded session runs as the console's role: read and append only.
    await expect(getDb().$executeRawUnsafe("UPDATE audit_log SET outcome = 'denied'")).rejects.toThrow(
      /permission denied/,
    );
    await expect(getDb().$executeRawUnsafe("ALTER TABLE audit_log DISABLE TRIGGER ALL")).rejects.toThrow(
      /must be owner/,
    );
    expect((await queryAudit({ actor: "alice" }, { limit: 4 })).nextCursor).not.toBeNull();
  });
});

describe("audit page over a time range that ends", () => {
  /**
   * Rows whose `at` is not in id order (a writer takes its time before the chain's lock, so a row
   * can carry an earlier time than the row before it): every fifth row is seven minutes early.
   */
  const base = Date.parse("2001-03-01T00:00:00.000Z");
  const minute = 60_000;
  let rows: Array<{ id: string; at: number; action: string }> = [];

  beforeAll(async () => {
    const fields = Array.from({ length: 60 }, (_, i) =>
      auditFields(
        entry({ queue: "skew.dlq", action: i % 2 ? "redrive.start" : "letter.view", target: `m-${i}` }),
        new Date(base + i * minute - (i % 5 === 0 ? 7 * minute : 0)).toISOString(),
      ),
    );
    const written = await getDb().$transaction((tx) => insertChained(tx, fields));
    rows = written.map((w, i) => ({ id: w.id, at: Date.parse(fields[i].at), action: fields[i].action }));
  });

  /** Every page, following the cursors, as the audit page and the export read them. */
  async function allPages(
    filter: Parameters<typeof queryAudit>[0],
    timeIndex: Parameters<typeof queryAudit>[2],
  ): Promise<string[]> {
    const ids: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await queryAudit(filter, { before, limit: 7 }, timeIndex);
      ids.push(...page.rows.map((r) => r.id));
      if (!page.nextCursor) return ids;
      before = page.nextCursor;
    }
  }

  /** Through the time index; walked by id because the range is too large; because it ends among the newest rows. */
  const ways = [
    { newerThan: 0, atMost: 100_000 },
    { newerThan: 0, atMost: 0 },
    { newerThan: 1_000_000, atMost: 100_000 },
  ];
  const from = new Date(base + 10 * minute);
  const to = new Date(base + 40 * minute);
  const inRange = (r: { at: number }) => r.at >= from.getTime() && r.at <= to.getTime();
  const newestFirst = (rs: Array<{ id: string }>) =>
    rs.map((r) => r.id).sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : -1));

  it("reads the same rows through the time index as by walking ids: all of them, newest first", async () => {
    const expected = newestFirst(rows.filter(inRange));
    // Minutes 10-40: rows 10-40, less rows 10 and 15 (seven minutes early), plus row 45 (at minute 38).
    expect(expected.length).toBe(30);
    expect(expected[0]).toBe(rows[45].id);
    for (const timeIndex of ways) {
      expect(await allPages({ queue: "skew.dlq", from, to }, timeIndex)).toEqual(expected);
      expect(await allPages({ queue: "skew.dlq", to }, timeIndex)).toEqual(
        newestFirst(rows.filter((r) => r.at <= to.getTime())),
      );
    }
  });

  it("keeps every other filter: an action prefix, a list of actions, an actor", async () => {
    for (const timeIndex of ways) {
      expect(await allPages({ queue: "skew.dlq", action: "redrive.*", from, to }, timeIndex)).toEqual(
        newestFirst(rows.filter((r) => inRange(r) && r.action === "redrive.start")),
      );
      expect(await allPages({ queue: "skew.dlq", actions: ["letter.view"], from, to }, timeIndex)).toEqual(
        newestFirst(rows.filter((r) => inRange(r) && r.action === "letter.view")),
      );
      expect(await allPages({ queue: "skew.dlq", actor: "nobody", from, to }, timeIndex)).toEqual([]);
      expect(await allPages({ queue: "skew.dlq", actions: [], from, to }, timeIndex)).toEqual([]);
    }
  });
});
