import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { ROLES } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db";
import { visibleSha256 } from "@/lib/masking/digest";
import type { IndexRow } from "./index-row";
import { upsertLetters } from "./index-store";
import { ensureSearchKey, fillLetterSearch, fillLetterSearchBatch } from "./letter-search";
import { indexRow } from "./test-kit";
import type { SearchScope } from "./masked-search";
import {
  COUNT_CAP,
  countLetters,
  countLettersCapped,
  queryLetters,
  SEARCH_LOWER_BOUND,
  SEARCH_WINDOW,
} from "./queries";

/**
 * The index's reads at their edges: the capped count, and the text search through its candidate
 * condition (triage_search_text, trigram-indexed on Postgres), which must find exactly what the
 * per-role condition alone finds, whatever the query's characters.
 */
const CONN = "queries-conn";
const queue = `q-${randomUUID().slice(0, 8)}`;
const VERSION = 7002;
afterAll(async () => {
  await getDb().$executeRawUnsafe(`DELETE FROM triage_letters WHERE connection_id = $1`, CONN);
});

function row(i: number, over: Partial<IndexRow> = {}): IndexRow {
  return indexRow(i, { search_version: VERSION, sha256: i.toString(16).padStart(64, "a"), ...over });
}

const hidden = (s: string) => s.replace("hunter2-Zq", "[hidden]");
const SECRET = "Login refused for order 17: password=hunter2-Zq";
const ROWS: IndexRow[] = [
  row(1, {
    exception_message: SECRET,
    exception_search: { viewer: hidden(SECRET), operator: hidden(SECRET), admin: hidden(SECRET) },
  }),
  row(2, { exception_message: "disk 100% full_now at C:\\temp\\file" }),
  row(3, { exception_class: "com.acme.Multi", exception_message: "line one\nline two" }),
  row(4, { exception_class: "com.acme.NoMessage", exception_message: null }),
  // Masked under an older masking version: its message is not searched by a masked role at all.
  row(5, { exception_message: SECRET, exception_search: { viewer: hidden(SECRET) }, search_version: VERSION - 1 }),
  // Only the operator's rules change this one: the viewer sees (and searches) the raw message.
  row(6, { exception_message: "token=abc123 expired", exception_search: { operator: "token=[hidden] expired" } }),
  row(7, { letter_id: "letter-XYZ", message_id: "MSG-abc", exception_message: "ordinary failure" }),
  row(8, { exception_class: null, exception_message: "Ünïcode façade naïve" }),
];

/** The filter's meaning, spelt out: what the SQL must answer, candidates or not. */
function expected(q: string, scope: SearchScope): string[] {
  const t = q.trim();
  const has = (s: string | null | undefined) => Boolean(s?.toLowerCase().includes(t.toLowerCase()));
  return ROWS.filter((r) => {
    const ids = r.letter_id === t || r.message_id === t;
    if (scope.kind === "raw")
      return has(r.exception_message) || has(r.exception_class) || ids || r.sha256 === t.toLowerCase();
    const seen = r.exception_search?.[scope.role] ?? r.exception_message;
    const digest = visibleSha256(r.sha256, { rules: [{}] as never, payload: "masked" });
    return (
      (r.search_version === scope.version && has(seen)) || has(r.exception_class) || ids || digest === t.toLowerCase()
    );
  })
    .map((r) => r.letter_id)
    .sort();
}

const QUERIES = [
  "password",
  "hunter2-Zq",
  "password=[hidden]",
  "[HIDDEN]",
  "order 1",
  "100%",
  "%",
  "_",
  "full_now",
  "C:\\temp",
  "\\",
  "one\nline",
  "line",
  "ACME.multi",
  "NoMessage",
  "token=",
  "abc123",
  "letter-XYZ",
  "letter-xyz",
  "MSG-abc",
  "l-7",
  "m",
  "ok",
  "façade",
  "zzzz-nothing",
  `${"a".repeat(61)}abc`,
];

describe("triage index reads", () => {
  it("text search answers exactly the per-role condition, for raw and masked scopes and any characters", async () => {
    await upsertLetters(CONN, queue, randomUUID(), ROWS);
    const scopes: SearchScope[] = [
      { kind: "raw" },
      { kind: "masked", role: "viewer", version: VERSION },
      { kind: "masked", role: "operator", version: VERSION },
    ];
    const digestOf3 = visibleSha256(ROWS[2].sha256, { rules: [{}] as never, payload: "masked" });
    for (const scope of scopes) {
      for (const q of [...QUERIES, ROWS[3].sha256, ROWS[3].sha256.toUpperCase(), digestOf3]) {
        const filter = { connectionId: CONN, queue, text: q, search: scope };
        const got = (await queryLetters(filter, { limit: 1000 })).rows.map((r) => r.letterId).sort();
        const want = expected(q, scope);
        expect({ scope, q, got }).toEqual({ scope, q, got: want });
        expect(await countLettersCapped(filter)).toEqual({ count: want.length, atLeast: false });
      }
    }
    // The two queries a masked role could tell apart only through a masked value answer alike.
    const viewer: SearchScope = { kind: "masked", role: "viewer", version: VERSION };
    expect(expected("hunter2-Zq", viewer)).toEqual([]);
    expect(expected("password=[hidden]", viewer)).toEqual(["l-1"]);
  });

  it("finds every role's own masked text (triage_search_text names each role)", async () => {
    const q3 = `${queue}-roles`;
    await upsertLetters(
      CONN,
      q3,
      randomUUID(),
      ROLES.map((role, i) =>
        row(i + 1, { exception_message: "raw text", exception_search: { [role]: `seen only by ${role} zq${i}` } }),
      ),
    );
    for (const [i, role] of ROLES.entries()) {
      const filter = {
        connectionId: CONN,
        queue: q3,
        text: `${role} zq${i}`,
        search: { kind: "masked" as const, role, version: VERSION },
      };
      expect((await queryLetters(filter, { limit: 10 })).rows.map((r) => r.letterId)).toEqual([`l-${i + 1}`]);
    }
  });

  it("indexes no text that no role sees: a secret every role sees masked is not a candidate", async () => {
    const texts = await getDb().$queryRawUnsafe<Array<{ t: string }>>(
      `SELECT triage_search_text(exception_class, exception_message, exception_search) AS t FROM triage_letters
       WHERE connection_id = $1 AND queue = $2 AND letter_id IN ('l-1', 'l-6') ORDER BY letter_id`,
      CONN,
      queue,
    );
    expect(texts.map((r) => r.t)).toEqual([
      `com.acme.Thing\n${hidden(SECRET)}`,
      // The viewer and admin see row 6 raw, the operator masked: both are searchable by someone.
      "com.acme.Thing\ntoken=abc123 expired\ntoken=[hidden] expired",
    ]);
  });

  it("on Postgres the candidates come from a trigram index, off triage_letters", async () => {
    const idx = await getDb().$queryRawUnsafe<Array<{ tablename: string; indexdef: string }>>(
      `SELECT tablename, indexdef FROM pg_indexes WHERE indexdef LIKE '%gin_trgm_ops%' ORDER BY tablename`,
    );
    expect(idx.map((i) => i.tablename)).toEqual(["triage_letter_search"]);
  });

  it("answers exactly the per-role condition once the search text is filled, as before", async () => {
    const qf = `${queue}-filled`;
    await upsertLetters(CONN, qf, randomUUID(), ROWS);
    await fillLetterSearch();
    const pending = await getDb().$queryRawUnsafe<Array<{ n: bigint }>>(
      `SELECT count(*) AS n FROM triage_search_pending p JOIN triage_letters l USING (id) WHERE l.connection_id = $1 AND l.queue = $2`,
      CONN,
      qf,
    );
    expect(Number(pending[0].n)).toBe(0);
    const scopes: SearchScope[] = [
      { kind: "raw" },
      { kind: "masked", role: "viewer", version: VERSION },
      { kind: "masked", role: "operator", version: VERSION },
    ];
    const digestOf3 = visibleSha256(ROWS[2].sha256, { rules: [{}] as never, payload: "masked" });
    for (const scope of scopes) {
      for (const q of [...QUERIES, ROWS[3].sha256, digestOf3]) {
        const filter = { connectionId: CONN, queue: qf, text: q, search: scope };
        const got = (await queryLetters(filter, { limit: 1000 })).rows.map((r) => r.letterId).sort();
        expect({ scope, q, got }).toEqual({ scope, q, got: expected(q, scope) });
      }
    }
  });

  it("finds a letter whose search text is not filled yet, and finds it once after the fill", async () => {
    const ql = `${queue}-lag`;
    const viewer: SearchScope = { kind: "masked", role: "viewer", version: VERSION };
    const find = async (text: string) => {
      const filter = { connectionId: CONN, queue: ql, text, search: viewer };
      return {
        rows: (await queryLetters(filter, { limit: 10 })).rows.map((r) => r.letterId),
        count: await countLettersCapped(filter),
      };
    };
    await upsertLetters(CONN, ql, randomUUID(), [row(1, { exception_message: "lag zq-first text" })]);
    const listed = await getDb().$queryRawUnsafe<Array<{ pending: boolean; filled: boolean }>>(
      `SELECT EXISTS (SELECT 1 FROM triage_search_pending p WHERE p.id = l.id) AS pending,
              EXISTS (SELECT 1 FROM triage_letter_search s WHERE s.id = l.id) AS filled
       FROM triage_letters l WHERE l.connection_id = $1 AND l.queue = $2`,
      CONN,
      ql,
    );
    expect(listed).toEqual([{ pending: true, filled: false }]);
    expect(await find("zq-first")).toEqual({ rows: ["l-1"], count: { count: 1, atLeast: false } });

    await fillLetterSearch();
    expect(await find("zq-first")).toEqual({ rows: ["l-1"], count: { count: 1, atLeast: false } });

    // Seen again with another message: the filled text is stale until the next fill, and the
    // letter is found by its new text, not its old one, before and after that fill.
    await upsertLetters(CONN, ql, randomUUID(), [row(1, { exception_message: "lag zq-second text" })]);
    expect(await find("zq-second")).toEqual({ rows: ["l-1"], count: { count: 1, atLeast: false } });
    expect(await find("zq-first")).toEqual({ rows: [], count: { count: 0, atLeast: false } });
    await fillLetterSearch();
    expect(await find("zq-second")).toEqual({ rows: ["l-1"], count: { count: 1, atLeast: false } });
    expect(await find("zq-first")).toEqual({ rows: [], count: { count: 0, atLeast: false } });
  });

  it("finds letters by a payload digest as a masked role is shown it, before and after the fill and across a key rotation", async () => {
    const qk = `${queue}-keyed`;
    const twin = ROWS[0].sha256;
    await upsertLetters(CONN, qk, randomUUID(), [row(1), row(2), row(3, { sha256: twin })]);
    const viewer: SearchScope = { kind: "masked", role: "viewer", version: VERSION };
    const shown = visibleSha256(twin, { rules: [{}] as never, payload: "masked" });
    const find = async () => {
      const filter = { connectionId: CONN, queue: qk, text: shown, search: viewer };
      return {
        rows: (await queryLetters(filter, { limit: 10 })).rows.map((r) => r.letterId).sort(),
        count: await countLettersCapped(filter),
      };
    };
    const both = { rows: ["l-1", "l-3"], count: { count: 2, atLeast: false } };
    const stored = () =>
      getDb().$queryRawUnsafe<Array<{ letter_id: string; keyed_sha256: string | null }>>(
        `SELECT l.letter_id, s.keyed_sha256 FROM triage_letters l JOIN triage_letter_search s USING (id)
         WHERE l.connection_id = $1 AND l.queue = $2 ORDER BY l.letter_id`,
        CONN,
        qk,
      );

    // Not filled yet: found among the pending letters.
    expect(await find()).toEqual(both);
    await fillLetterSearch();
    expect(await find()).toEqual(both);
    const hex = shown.slice("hmac:".length);
    expect((await stored()).filter((r) => r.keyed_sha256 === hex).map((r) => r.letter_id)).toEqual(["l-1", "l-3"]);

    // The digests were written under a key that is no longer the server's (a rotation): they are
    // not trusted, every letter of the DLQ is tested, and the next fill rewrites them under the new key.
    await getDb().$executeRawUnsafe(`UPDATE triage_search_key SET fingerprint = 'an earlier key' WHERE id = 1`);
    await getDb().$executeRawUnsafe(
      `UPDATE triage_letter_search SET keyed_sha256 = 'written under the earlier key'
       WHERE id IN (SELECT id FROM triage_letters WHERE connection_id = $1 AND queue = $2)`,
      CONN,
      qk,
    );
    expect(await find()).toEqual(both);
    expect(await ensureSearchKey()).toBe("renamed");
    expect(await ensureSearchKey()).toBe("current");
    // Renaming the key listed every letter as pending again: still found before the fill rewrites them.
    expect(await find()).toEqual(both);
    await fillLetterSearch();
    expect(await find()).toEqual(both);
    expect((await stored()).filter((r) => r.keyed_sha256 === hex).map((r) => r.letter_id)).toEqual(["l-1", "l-3"]);
  });

  it("a letter whose payload changed is pending again, and found by its new digest only", async () => {
    const qp = `${queue}-payload`;
    await upsertLetters(CONN, qp, randomUUID(), [row(1)]);
    await fillLetterSearch();
    const viewer: SearchScope = { kind: "masked", role: "viewer", version: VERSION };
    const find = async (sha256: string) => {
      const text = visibleSha256(sha256, { rules: [{}] as never, payload: "masked" });
      return (await queryLetters({ connectionId: CONN, queue: qp, text, search: viewer }, { limit: 10 })).rows.map(
        (r) => r.letterId,
      );
    };
    expect(await find(ROWS[0].sha256)).toEqual(["l-1"]);
    await upsertLetters(CONN, qp, randomUUID(), [row(1, { sha256: ROWS[1].sha256 })]);
    expect(await find(ROWS[1].sha256)).toEqual(["l-1"]);
    await fillLetterSearch();
    expect(await find(ROWS[1].sha256)).toEqual(["l-1"]);
    expect(await find(ROWS[0].sha256)).toEqual([]);
  });

  it("a fill leaves pending a letter changed after the fill read it", async () => {
    const qr = `${queue}-race`;
    await upsertLetters(CONN, qr, randomUUID(), [row(1, { exception_message: "race zq-old" })]);
    const [{ id }] = await getDb().$queryRawUnsafe<Array<{ id: bigint }>>(
      `SELECT id FROM triage_letters WHERE connection_id = $1 AND queue = $2`,
      CONN,
      qr,
    );
    // The letter changes (its pending counter moves on) between the fill's read and its delete:
    // simulated by a fill whose batch was read with the old counter.
    await upsertLetters(CONN, qr, randomUUID(), [row(1, { exception_message: "race zq-new" })]);
    const removed = await getDb().$executeRawUnsafe(
      `DELETE FROM triage_search_pending p USING (VALUES ($1::bigint, 1)) b(id, n) WHERE p.id = b.id AND p.n = b.n`,
      id,
    );
    expect(removed).toBe(0);
    const viewer: SearchScope = { kind: "masked", role: "viewer", version: VERSION };
    const rows = (await queryLetters({ connectionId: CONN, queue: qr, text: "zq-new", search: viewer }, { limit: 10 }))
      .rows;
    expect(rows.map((r) => r.letterId)).toEqual(["l-1"]);
  });

  it("deleting letters takes their search text and pending rows with them", async () => {
    const qd = `${queue}-delete`;
    await upsertLetters(CONN, qd, randomUUID(), [row(1), row(2)]);
    await fillLetterSearchBatch(getDb(), 1_000_000);
    await upsertLetters(CONN, qd, randomUUID(), [row(2, { exception_message: "changed" })]);
    const ids = await getDb().$queryRawUnsafe<Array<{ id: bigint }>>(
      `DELETE FROM triage_letters WHERE connection_id = $1 AND queue = $2 RETURNING id`,
      CONN,
      qd,
    );
    const left = await getDb().$queryRawUnsafe<Array<{ n: bigint }>>(
      `SELECT (SELECT count(*) FROM triage_letter_search WHERE id = ANY($1::bigint[]))
            + (SELECT count(*) FROM triage_search_pending WHERE id = ANY($1::bigint[])) AS n`,
      ids.map((r) => r.id),
    );
    expect(Number(left[0].n)).toBe(0);
  });

  it("a text search past the newest rows' window: pages in order, counts exact or a true lower bound", async () => {
    const q4 = `${queue}-window`;
    const n = SEARCH_WINDOW + 2000;
    // Row i arrives at minute i: the highest i is the newest. Every 10th says "common", rows 1..3
    // (the oldest) "rare-zq", every 50th "middling".
    await getDb().$executeRawUnsafe(
      `INSERT INTO triage_letters (connection_id, queue, letter_id, position, message_id, first_seen_at, last_seen_at,
         arrived_at, exception_class, exception_message, exception_search, search_version, group_key, group_label,
         group_basis, disposition, body_size, sha256, fingerprint, scan_id, headers)
       SELECT $1, $2, 'w-' || i, i, 'wm-' || i, now(), now(), timestamptz '2026-01-01' + i * interval '1 minute', 'com.acme.W',
         CASE WHEN i <= 3 THEN 'rare-zq ' WHEN i % 10 = 0 THEN 'common ' WHEN i % 50 = 7 THEN 'middling ' ELSE 'plain ' END || i,
         jsonb_build_object('viewer', 'seen ' || i), $3, 'g', 'W', 'exception', 'unknown', 1, md5(i::text) || md5(i::text), md5(i::text), gen_random_uuid(),
         jsonb_build_object('x-tenant', CASE WHEN i <= 2 THEN 'rare' ELSE 't' || (i % 10) END)
       FROM generate_series(1, ${n}) i`,
      CONN,
      q4,
      VERSION,
    );
    const f = (text: string) => ({ connectionId: CONN, queue: q4, text, search: { kind: "raw" as const } });
    const common = await queryLetters(f("common"), { limit: 50 });
    expect(common.rows.map((r) => r.letterId)).toEqual(Array.from({ length: 50 }, (_, i) => `w-${n - i * 10}`));
    const next = await queryLetters(f("common"), { limit: 50, after: common.nextCursor });
    expect(next.rows[0].letterId).toBe(`w-${n - 500}`);
    const commonCount = await countLettersCapped(f("common"));
    expect(commonCount).toEqual({ count: SEARCH_WINDOW / 10, atLeast: true });
    expect(commonCount.count).toBeLessThanOrEqual(await countLetters(f("common")));
    expect(SEARCH_WINDOW / 10).toBeGreaterThanOrEqual(SEARCH_LOWER_BOUND);
    expect((await queryLetters(f("rare-zq"), { limit: 50 })).rows.map((r) => r.letterId)).toEqual([
      "w-3",
      "w-2",
      "w-1",
    ]);
    expect(await countLettersCapped(f("rare-zq"))).toEqual({ count: 3, atLeast: false });
    const middling = await countLetters(f("middling"));
    expect(await countLettersCapped(f("middling"))).toEqual({ count: middling, atLeast: false });
    expect((await queryLetters(f("middling"), { limit: 1000 })).rows).toHaveLength(middling);
    // A header value: the same, by the GIN index when rare.
    const h = (value: string) => ({
      connectionId: CONN,
      queue: q4,
      header: { name: "x-tenant", value },
      search: { kind: "raw" as const },
    });
    expect((await queryLetters(h("t3"), { limit: 3 })).rows.map((r) => r.letterId)).toEqual([
      `w-${n - 7}`,
      `w-${n - 17}`,
      `w-${n - 27}`,
    ]);
    expect(await countLettersCapped(h("t3"))).toEqual({ count: SEARCH_WINDOW / 10, atLeast: true });
    expect((await queryLetters(h("rare"), { limit: 3 })).rows.map((r) => r.letterId)).toEqual(["w-2", "w-1"]);
    expect(await countLettersCapped(h("rare"))).toEqual({ count: 2, atLeast: false });
    // The viewer searches what it sees ("seen <i>"), not the raw message.
    const viewer = { kind: "masked" as const, role: "viewer" as const, version: VERSION };
    expect(await countLettersCapped({ ...f("common"), search: viewer })).toEqual({ count: 0, atLeast: false });
    expect(
      (await queryLetters({ ...f(`seen ${n - 1}`), search: viewer }, { limit: 5 })).rows.map((r) => r.letterId),
    ).toEqual([`w-${n - 1}`]);
  });

  it("counts a set up to the cap exactly, and above it says only 'at least the cap'", async () => {
    const q2 = `${queue}-count`;
    await upsertLetters(
      CONN,
      q2,
      randomUUID(),
      Array.from({ length: 12 }, (_, i) => row(i + 1, { reason: i < 5 ? "expired" : "rejected" })),
    );
    const all = { connectionId: CONN, queue: q2 };
    expect(await countLetters(all)).toBe(12);
    expect(await countLettersCapped(all, 12)).toEqual({ count: 12, atLeast: false });
    expect(await countLettersCapped(all, 11)).toEqual({ count: 11, atLeast: true });
    expect(await countLettersCapped(all, 3)).toEqual({ count: 3, atLeast: true });
    expect(await countLettersCapped({ ...all, reason: "expired" }, 5)).toEqual({ count: 5, atLeast: false });
    expect(await countLettersCapped({ ...all, reason: "expired" }, 4)).toEqual({ count: 4, atLeast: true });
    expect(await countLettersCapped({ ...all, reason: "nothing" }, 0)).toEqual({ count: 0, atLeast: false });
    expect(await countLettersCapped(all)).toEqual({ count: 12, atLeast: false });
    expect(COUNT_CAP).toBeGreaterThanOrEqual(1000);
  });
});
