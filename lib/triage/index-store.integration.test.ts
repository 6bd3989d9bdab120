import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db";
import { PrismaClient } from "@/lib/generated/prisma/client";
import type { IndexRow } from "./index-row";
import { upsertLetters } from "./index-store";

/**
 * The bulk upsert has two paths: binary arrays through pg (the process client on Postgres) and one
 * JSON parameter through Prisma (PGlite, or any other client). Both must store the same row.
 */
const other = new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL! }) });
afterAll(async () => {
  await getDb().$executeRawUnsafe(`DELETE FROM triage_letters WHERE connection_id = 'store-conn'`);
  await other.$disconnect();
});

function row(i: number, over: Partial<IndexRow> = {}): IndexRow {
  return {
    letter_id: `l-${i}`,
    position: i,
    kafka_partition: 3,
    kafka_offset: "9007199254740993",
    message_id: null,
    dead_lettered_at: "2026-01-01T00:00:00.123Z",
    reason: "rejected",
    origin_queue: "orders",
    exception_class: "com.acme.Thing",
    exception_message: `thing ${i} failed: "é€😀" {a,b} back\\slash`,
    normalized_message: "thing <num> failed: <str> {a,b} back\\slash",
    top_frame: "com.acme.Thing.run",
    group_key: "g",
    group_label: "Thing",
    group_basis: "exception",
    disposition: "unknown",
    rule_id: null,
    receive_count: null,
    headers: { "x-tenant": "acme", "x-quote": '"{}"\\' },
    body_size: 3,
    sha256: "0".repeat(64),
    fingerprint: "f".repeat(32),
    payload: Uint8Array.of(0, 1, 2, 255, 92, 120),
    payload_key_id: "k1",
    payload_truncated: true,
    handled_outcome: null,
    exception_search: null,
    search_version: null,
    ...over,
  };
}

async function stored(queue: string) {
  const rows = await getDb().$queryRawUnsafe<Array<Record<string, unknown>>>(
    `SELECT letter_id, position, kafka_partition, kafka_offset::text AS kafka_offset, message_id, dead_lettered_at, arrived_at, reason, origin_queue,
       exception_class, exception_message, normalized_message, top_frame, group_key, group_label, group_basis, disposition, rule_id,
       receive_count, headers, body_size, sha256, fingerprint, encode(payload_ciphertext, 'hex') AS payload, payload_key_id,
       payload_truncated, handled_outcome, gone_at
     FROM triage_letters WHERE connection_id = 'store-conn' AND queue = $1 ORDER BY position`,
    queue,
  );
  return rows;
}

describe("upsertLetters", () => {
  it("stores the same rows through pg binary arrays and through Prisma JSON", async () => {
    const q1 = `store-${randomUUID()}`;
    const q2 = `store-${randomUUID()}`;
    const rows = [
      row(0),
      row(1, {
        payload: null,
        payload_key_id: null,
        dead_lettered_at: null,
        kafka_partition: null,
        kafka_offset: null,
        headers: {},
      }),
    ];
    await upsertLetters("store-conn", q1, randomUUID(), rows, getDb());
    await upsertLetters("store-conn", q2, randomUUID(), rows, other as unknown as ReturnType<typeof getDb>);
    const a = await stored(q1);
    const b = await stored(q2);
    expect(a).toHaveLength(2);
    // arrived_at is the dead-lettering time, else now() (which differs between the two writes).
    const comparable = (rs: Array<Record<string, unknown>>) =>
      rs.map((r) => ({ ...r, arrived_at: r.dead_lettered_at ? r.arrived_at : "now" }));
    expect(comparable(a)).toEqual(comparable(b));
    expect(a[0].arrived_at).toEqual(a[0].dead_lettered_at);
    expect(a[0]).toMatchObject({
      payload: "000102ff5c78",
      kafka_offset: "9007199254740993",
      headers: { "x-tenant": "acme", "x-quote": '"{}"\\' },
      exception_message: rows[0].exception_message,
    });
    expect(a[0].dead_lettered_at).toEqual(new Date("2026-01-01T00:00:00.123Z"));
    expect(a[1]).toMatchObject({ payload: null, headers: {}, dead_lettered_at: null, receive_count: null });
  });

  it("a letter seen again is refreshed in place, present again", async () => {
    const q = `store-${randomUUID()}`;
    await upsertLetters("store-conn", q, randomUUID(), [row(0)], getDb());
    await getDb().$executeRawUnsafe(`UPDATE triage_letters SET gone_at = now() WHERE queue = $1`, q);
    await upsertLetters(
      "store-conn",
      q,
      randomUUID(),
      // Another payload has another digest (sha256 is the body's).
      [row(0, { exception_message: "again", payload: Uint8Array.of(7), sha256: "1".repeat(64) })],
      getDb(),
    );
    const [r] = await stored(q);
    expect(r).toMatchObject({ exception_message: "again", payload: "07", gone_at: null });
    expect(await stored(q)).toHaveLength(1);
  });

  it("keeps the stored sealed payload of a letter whose payload and key are unchanged, and seals a changed one again", async () => {
    for (const db of [getDb(), other]) {
      const q = `store-${randomUUID()}`;
      await upsertLetters("store-conn", q, randomUUID(), [row(0), row(1), row(2), row(3)], db);
      const first = await stored(q);
      // Seen again: every payload sealed anew (another nonce, so other bytes), the same payload or not.
      await upsertLetters(
        "store-conn",
        q,
        randomUUID(),
        [
          row(0, { payload: Uint8Array.of(9, 9), exception_message: "seen again" }),
          row(1, { payload: Uint8Array.of(9, 9), sha256: "1".repeat(64) }),
          row(2, { payload: Uint8Array.of(9, 9), payload_key_id: "k2" }),
          row(3, { payload: Uint8Array.of(9, 9), payload_truncated: false }),
        ],
        db,
      );
      const [same, changed, rekeyed, uncut] = await stored(q);
      expect(same).toMatchObject({ payload: first[0].payload, payload_key_id: "k1", exception_message: "seen again" });
      expect(changed).toMatchObject({ payload: "0909", sha256: "1".repeat(64) });
      expect(rekeyed).toMatchObject({ payload: "0909", payload_key_id: "k2" });
      expect(uncut).toMatchObject({ payload: "0909", payload_truncated: false });
      // A payload that was absent (none kept) and is now there is written.
      await upsertLetters("store-conn", q, randomUUID(), [row(4, { payload: null, payload_key_id: null })], db);
      await upsertLetters(
        "store-conn",
        q,
        randomUUID(),
        [row(4, { payload: Uint8Array.of(5), payload_key_id: null })],
        db,
      );
      expect((await stored(q))[4]).toMatchObject({ payload: "05" });
    }
  });
});

describe("the UPDATE statement triggers of triage_letters", () => {
  // Their plans are cached per session with the transition tables' row count of the first call
  // (often 0): without these settings, a nested loop made every later batch quadratic.
  it("join their transition tables without nested loops and without JIT", async () => {
    const rows = await getDb().$queryRawUnsafe<Array<{ proname: string; proconfig: string[] | null }>>(
      `SELECT p.proname, p.proconfig FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
       WHERE t.tgrelid = 'triage_letters'::regclass AND NOT t.tgisinternal AND (t.tgtype & 16) <> 0 ORDER BY 1`,
    );
    expect(rows.map((r) => r.proname)).toEqual([
      "triage_group_stats_on_update",
      "triage_header_stats_on_update",
      "triage_search_pending_on_update",
    ]);
    for (const r of rows) expect(r.proconfig).toEqual(expect.arrayContaining(["enable_nestloop=off", "jit=off"]));
  });
});

describe("the console's Postgres sessions", () => {
  // JIT compiled for 340-710 ms before a 5 ms digest search of 10,000,000 letters (docs/benchmarks.md).
  it("run without JIT", async () => {
    const rows = await getDb().$queryRawUnsafe<Array<{ jit: string }>>("SHOW jit");
    expect(rows[0].jit).toBe("off");
  });
});
