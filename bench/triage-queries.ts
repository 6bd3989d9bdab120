/**
 * Triage index queries over 1,000,000 synthetic rows (900,000 in one DLQ, the worst case, and
 * 100,000 spread over nine others), against a plain `SELECT count(*)` of the same table in the
 * same run. Goal: every view under 10x that baseline and under 300 ms.
 *   npm run bench:triage-queries       (BENCH_ROWS to change the count; smoke 5,000)
 */
import { applyMigrations } from "../scripts/lib/migrations";
import { createTestDatabase } from "../scripts/lib/test-database";
import { report, SMOKE, size } from "./report";

const ROWS = size("BENCH_ROWS", 1_000_000, 5_000);
/** How deep the keyset page's cursor is (rows into group g3: about 4% of the big DLQ). */
const DEEP = SMOKE ? 100 : 20_000;
const BIG = Math.round(ROWS * 0.9);

async function main() {
  const db = await createTestDatabase("dlq_bench_queries");
  process.env.DATABASE_URL = db.url;
  await applyMigrations({ databaseUrl: db.url });
  const { getDb, closeDb } = await import("../lib/db");
  const q = await import("../lib/triage/queries");
  const { refreshGroupSummary } = await import("../lib/triage/index-store");
  const { DEFAULT_CLASSIFICATION_RULES } = await import("../lib/triage");
  const prisma = getDb();
  try {
    let t0 = performance.now();
    // Skewed groups (a few large, many small), 3 origins, 100 tenants, arrivals over 7 days.
    await prisma.$executeRawUnsafe(`
      INSERT INTO triage_letters (connection_id, queue, letter_id, position, message_id, first_seen_at, last_seen_at,
        dead_lettered_at, arrived_at, reason, origin_queue, exception_class, exception_message, normalized_message,
        group_key, group_label, group_basis, disposition, receive_count, headers, body_size, sha256, fingerprint, scan_id)
      SELECT 'bench', CASE WHEN i <= ${BIG} THEN 'big.dlq' ELSE 'small-' || (i % 9) || '.dlq' END, 'l-' || i, i, 'm-' || i, now(), now(),
        ts, ts, 'rejected', 'origin-' || (i % 3), 'com.acme.Error' || g, 'failure ' || i || ' in order ' || (i * 7), 'failure <n> in order <n>',
        'g' || g, 'Error' || g || ': failure <n>', 'exception', 'unknown', 1 + i % 5,
        jsonb_build_object('x-tenant', 't' || (i % 100), 'x-app-version', 'v' || (i % 5)), 1024,
        md5(i::text) || md5((i + 1)::text), md5(i::text), '00000000-0000-0000-0000-000000000001'
      FROM (SELECT i, floor(40 * power((i % 1000) / 1000.0, 3))::int AS g,
                   now() - ((i % 604800) * interval '1 second') AS ts
            FROM generate_series(1, ${ROWS}) i) s`);
    console.log(`inserted ${ROWS} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await prisma.$executeRawUnsafe("VACUUM ANALYZE triage_letters");
    t0 = performance.now();
    await refreshGroupSummary("bench", "big.dlq");
    console.log(`group summary of big.dlq (${BIG} letters, end of a scan) in ${Math.round(performance.now() - t0)} ms`);

    const time = async (fn: () => Promise<unknown>) => {
      await fn();
      const xs: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        await fn();
        xs.push(performance.now() - t);
      }
      return xs.sort((a, b) => a - b)[2];
    };
    const big = { connectionId: "bench", queue: "big.dlq" };
    const baseline = await time(() => prisma.$queryRawUnsafe("SELECT count(*) FROM triage_letters"));
    // A cursor 20,000 rows deep into group g3 (found with OFFSET here only, to set up the page).
    const deep = await prisma.$queryRawUnsafe<Array<{ arrived_at: Date; id: bigint }>>(
      `SELECT arrived_at, id FROM triage_letters WHERE connection_id = 'bench' AND queue = 'big.dlq' AND group_key = 'g3' AND gone_at IS NULL
       ORDER BY arrived_at DESC, id DESC OFFSET ${DEEP} LIMIT 1`,
    );
    const deepCursor = q.encodeCursor({ at: new Date(deep[0].arrived_at).toISOString(), id: String(deep[0].id) });
    const views: Array<[string, () => Promise<unknown>]> = [
      [
        "groups view (summary, labelled, bursts)",
        () => q.queryGroups("bench", "big.dlq", DEFAULT_CLASSIFICATION_RULES),
      ],
      ["filtered list, group, first page (50)", () => q.queryLetters({ ...big, groupKey: "g3" }, { limit: 50 })],
      [
        "filtered list, group, page 400 deep (keyset)",
        () => q.queryLetters({ ...big, groupKey: "g3" }, { limit: 50, after: deepCursor }),
      ],
      [
        "filtered list, header x-tenant=t7, first page",
        () => q.queryLetters({ ...big, header: { name: "x-tenant", value: "t7" } }, { limit: 50 }),
      ],
      [
        "filtered list, class + time range, first page",
        () =>
          q.queryLetters(
            { ...big, exceptionClass: "com.acme.Error12", from: new Date(Date.now() - 2 * 86_400_000) },
            { limit: 50 },
          ),
      ],
      ["count of group g3 (filtered-set count)", () => q.countLetters({ ...big, groupKey: "g3" })],
      ["group by origin (live GROUP BY)", () => q.queryGroupsBy("bench", "big.dlq", "origin")],
      ["group by reason (live GROUP BY)", () => q.queryGroupsBy("bench", "big.dlq", "reason")],
      ["group by class (live GROUP BY)", () => q.queryGroupsBy("bench", "big.dlq", "class")],
      ["group by header x-tenant (100 values)", () => q.queryGroupsBy("bench", "big.dlq", "header:x-tenant")],
      ["group by header x-app-version (5 values)", () => q.queryGroupsBy("bench", "big.dlq", "header:x-app-version")],
    ];
    console.log(`baseline SELECT count(*) of ${ROWS} rows: ${baseline.toFixed(1)} ms (median of 5)`);
    for (const [name, fn] of views) {
      const ms = await time(fn);
      const ratio = ms / baseline;
      const okay = ms < 300 && ratio < 10;
      report({
        operation: `${name}, ${ROWS} rows`,
        rate: { value: ms, unit: "ms" },
        anchor: { name: "count(*)", value: baseline, unit: "ms" },
      });
      console.log(
        `${okay ? "ok  " : "SLOW"} ${name.padEnd(48)} ${ms.toFixed(1).padStart(8)} ms  ${ratio.toFixed(2).padStart(6)}x baseline`,
      );
    }
  } finally {
    await closeDb();
    await db.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
