import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { maskingPolicy } from "@/lib/masking/policy";
import { type IndexRow, VERSION_HEADERS } from "./index-row";
import { deleteExpiredLetters, markGone, rebuildGroupSummary, refreshGroupSummary, upsertLetters } from "./index-store";
import { indexRow } from "./test-kit";
import { type GroupByKey, queryGroupsBy, queryGroupsByRows } from "./queries";
import { listGroups, maskValueGroups } from "./use-cases";

/**
 * The group summary is made from counts that statement triggers keep as letters are written
 * (triage_group_stats), not from a pass over the letters. After every kind of write (new letters,
 * letters seen again with other fields, letters gone, present again, regrouped, deleted) it must
 * equal the summary recomputed from the letters alone.
 */
const CONN = "group-stats-conn";
const db = getDb();
afterAll(async () => {
  await db.$executeRawUnsafe(`DELETE FROM triage_letters WHERE connection_id = $1`, CONN);
  await db.$executeRawUnsafe(`DELETE FROM triage_groups WHERE connection_id = $1`, CONN);
  await db.$executeRawUnsafe(`DELETE FROM triage_group_stats WHERE connection_id = $1`, CONN);
});

const HOUR = 3600_000;
const T0 = Date.parse("2026-03-01T08:00:00.000Z");

function row(i: number, over: Partial<IndexRow> = {}): IndexRow {
  const g = i % 3;
  const versionHeader = ["x-app-version", "app-version", "kafka_dlt-original-consumer-group"][i % 3];
  return indexRow(i, {
    // Spread over ten hours, with milliseconds, so buckets are wider than a minute and minutes hold several letters.
    dead_lettered_at: new Date(T0 + ((i * 90_001) % (10 * HOUR)) + (i % 1000)).toISOString(),
    reason: i % 4 === 0 ? null : ["rejected", "expired", "maxlen"][i % 3],
    origin_queue: i % 5 === 0 ? null : `orders-${i % 7}`,
    exception_class: `com.acme.E${g}`,
    exception_message: `failed ${i}`,
    normalized_message: "failed <num>",
    top_frame: `com.acme.E${g}.run`,
    group_key: `g${g}`,
    group_label: `E${g}: failed <num>`,
    receive_count: null,
    headers: i % 11 === 0 ? {} : { [versionHeader]: `v${i % 13}`, "x-other": "o" },
    payload: Uint8Array.of(1, 2, 3),
    payload_key_id: "k1",
    handled_outcome: i % 9 === 0 ? "redriven" : null,
    ...over,
  });
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

async function summary(queue: string) {
  return db.$queryRawUnsafe<Array<Record<string, unknown>>>(
    `SELECT group_key, label, basis, exception_class, normalized_message, sample_message, top_frame, reason, count,
       handled_count, first_at, last_at, origins, versions, sample_letter_ids, buckets, bucket_seconds
     FROM triage_groups WHERE connection_id = $1 AND queue = $2 ORDER BY group_key`,
    CONN,
    queue,
  );
}

async function expectKeptEqualsRebuilt(queue: string) {
  await refreshGroupSummary(CONN, queue, db);
  const kept = await summary(queue);
  const rebuilt = await rebuildGroupSummary(CONN, queue, db);
  expect(kept).toEqual(rebuilt);
  const negative = await db.$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM triage_group_stats WHERE connection_id = $1 AND (n < 0 OR n_handled < 0 OR n_handled > n)`,
    CONN,
  );
  expect(negative[0].n).toBe(0);
  // Letters ever indexed (what the issue sync counts), per group: every row of the group, gone or not.
  const everIndexed = await db.$queryRawUnsafe<Array<{ group_key: string; n: number }>>(
    `SELECT group_key, n FROM triage_group_stats WHERE connection_id = $1 AND queue = $2 AND kind = 'i' AND n > 0 ORDER BY group_key`,
    CONN,
    queue,
  );
  const rows = await db.$queryRawUnsafe<Array<{ group_key: string; n: number }>>(
    `SELECT group_key, count(*)::int AS n FROM triage_letters WHERE connection_id = $1 AND queue = $2 GROUP BY group_key ORDER BY group_key`,
    CONN,
    queue,
  );
  expect(everIndexed).toEqual(rows);
  // Every kept count of present letters (minutes, hours, origins, versions, reasons, classes) equals
  // the count taken from the letters.
  const keptCounts = await db.$queryRawUnsafe<Array<Record<string, unknown>>>(
    `SELECT group_key, kind, value, n, n_handled FROM triage_group_stats
     WHERE connection_id = $1 AND queue = $2 AND kind <> 'i' AND (n <> 0 OR n_handled <> 0) ORDER BY 1, 2, 3`,
    CONN,
    queue,
  );
  expect(keptCounts).toEqual(await countsFromLetters(queue));
  return kept;
}

async function countsFromLetters(queue: string) {
  const version = `COALESCE(${VERSION_HEADERS.map((h) => `t.headers->>'${h}'`).join(", ")})`;
  return db.$queryRawUnsafe<Array<Record<string, unknown>>>(
    `SELECT t.group_key, d.kind, d.value, count(*)::int AS n,
       (count(*) FILTER (WHERE d.kind IN ('m', 'h') AND t.handled_outcome IS NOT NULL))::int AS n_handled
     FROM triage_letters t CROSS JOIN LATERAL (VALUES
       ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
       ('h', (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint::text),
       ('o', t.origin_queue), ('v', ${version}), ('r', t.reason), ('c', t.exception_class)) AS d(kind, value)
     WHERE t.connection_id = $1 AND t.queue = $2 AND t.gone_at IS NULL AND d.value IS NOT NULL
     GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    CONN,
    queue,
  );
}

describe("group summary kept as letters are written", () => {
  it("equals the summary rebuilt from the letters after additions, changes, removals, regroup and deletes", async () => {
    const queue = `dlq-${randomUUID()}`;
    const neighbour = `dlq-${randomUUID()}`;
    const scan1 = randomUUID();
    // Two batches, and a neighbouring DLQ whose letters must not count here.
    await upsertLetters(
      CONN,
      queue,
      scan1,
      range(0, 250).map((i) => row(i)),
      db,
    );
    await upsertLetters(
      CONN,
      queue,
      scan1,
      range(250, 400).map((i) => row(i)),
      db,
    );
    await upsertLetters(
      CONN,
      neighbour,
      scan1,
      range(0, 50).map((i) => row(i)),
      db,
    );
    const first = await expectKeptEqualsRebuilt(queue);
    expect(first.map((g) => g.count)).toEqual([134, 133, 133]);
    expect((first[0].buckets as unknown[]).length).toBeGreaterThan(1);
    expect(first[0].bucket_seconds).toBe(900);
    expect((first[0].versions as string[]).length).toBeGreaterThan(1);

    // A rescan: letters seen again, some with another arrival, origin, outcome or group; new ones;
    // the rest gone.
    const scan2 = randomUUID();
    await upsertLetters(
      CONN,
      queue,
      scan2,
      range(0, 300).map((i) =>
        row(
          i,
          i % 10 === 1
            ? {
                dead_lettered_at: new Date(T0 + 30 * HOUR + i).toISOString(),
                origin_queue: "elsewhere",
                handled_outcome: "discarded",
                headers: { "x-service-version": "s9" },
                reason: "rejected",
              }
            : i % 10 === 2
              ? {
                  group_key: "g-moved",
                  group_label: "moved",
                  normalized_message: "moved",
                  exception_class: "com.acme.Moved",
                  top_frame: "com.acme.Moved.run",
                }
              : {},
        ),
      ),
      db,
    );
    await upsertLetters(
      CONN,
      queue,
      scan2,
      range(1000, 1100).map((i) => row(i)),
      db,
    );
    expect(await markGone(CONN, queue, scan2, db)).toBe(100);
    const second = await expectKeptEqualsRebuilt(queue);
    expect(second.map((g) => g.group_key)).toEqual(["g-moved", "g0", "g1", "g2"]);
    expect(second.reduce((n, g) => n + (g.count as number), 0)).toBe(400);
    expect(second[0].bucket_seconds).toBe(3600);

    // Gone letters seen again are present again.
    await upsertLetters(
      CONN,
      queue,
      scan2,
      range(350, 360).map((i) => row(i)),
      db,
    );
    await expectKeptEqualsRebuilt(queue);

    // Regroup (lib/triage/regroup.ts rewrites group keys in place) and a whole group leaving.
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET group_key = 'g-regrouped', group_label = 'regrouped' WHERE connection_id = $1 AND queue = $2 AND group_key = 'g1'`,
      CONN,
      queue,
    );
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2 AND group_key = 'g2'`,
      CONN,
      queue,
    );
    const third = await expectKeptEqualsRebuilt(queue);
    expect(third.map((g) => g.group_key)).toEqual(["g-moved", "g-regrouped", "g0"]);

    // Retention deletes gone letters (no change to the counts); a delete of present ones does.
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET gone_at = now() - interval '30 days' WHERE connection_id = $1 AND queue = $2 AND gone_at IS NOT NULL`,
      CONN,
      queue,
    );
    expect(await deleteExpiredLetters(7, db)).toBeGreaterThanOrEqual(1);
    await db.$executeRawUnsafe(
      `DELETE FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND letter_id IN ('l-3', 'l-6', 'l-1000')`,
      CONN,
      queue,
    );
    await expectKeptEqualsRebuilt(queue);

    // Every letter gone: no groups, and no counts left behind once refreshed.
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2`,
      CONN,
      queue,
    );
    expect(await expectKeptEqualsRebuilt(queue)).toEqual([]);
    const left = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM triage_group_stats WHERE connection_id = $1 AND queue = $2 AND kind <> 'i'`,
      CONN,
      queue,
    );
    expect(left[0].n).toBe(0);

    // The neighbour kept its own.
    await expectKeptEqualsRebuilt(neighbour);
    expect((await summary(neighbour)).reduce((n, g) => n + (g.count as number), 0)).toBe(50);
  });

  it("concurrent batches of one DLQ keep exact counts", async () => {
    const queue = `dlq-${randomUUID()}`;
    const scan = randomUUID();
    await Promise.all(
      range(0, 8).map((b) =>
        upsertLetters(
          CONN,
          queue,
          scan,
          range(b * 100, b * 100 + 100).map((i) => row(i, { dead_lettered_at: new Date(T0 + i).toISOString() })),
          db,
        ),
      ),
    );
    const kept = await expectKeptEqualsRebuilt(queue);
    expect(kept.reduce((n, g) => n + (g.count as number), 0)).toBe(800);
  });

  /** Arrivals a millisecond either side of an hour (and a minute) boundary. */
  const edge = (i: number) => new Date(T0 + Math.floor(i / 2) * HOUR - (i % 2 === 0 ? 1 : 0)).toISOString();

  it("letters either side of hour boundaries, moved across them, gone and deleted, in hour and minute buckets", async () => {
    for (const span of [40, 3]) {
      // 40 hours: buckets of an hour, added up from the hour rows; 3 hours: of five minutes, from the minute rows.
      const queue = `dlq-${randomUUID()}`;
      const scan1 = randomUUID();
      const ids = range(0, 2 * span);
      await upsertLetters(
        CONN,
        queue,
        scan1,
        ids.map((i) => row(i, { dead_lettered_at: edge(i) })),
        db,
      );
      const first = await expectKeptEqualsRebuilt(queue);
      expect(first[0].bucket_seconds).toBe(span === 40 ? 3600 : 300);
      // Seen again: some letters cross to the other side of their hour, one changes group and
      // outcome on the way, a few are not seen (gone).
      const scan2 = randomUUID();
      await upsertLetters(
        CONN,
        queue,
        scan2,
        ids
          .filter((i) => i % 7 !== 3)
          .map((i) =>
            row(i, {
              dead_lettered_at: i % 3 === 0 ? edge(i + (i % 2 === 0 ? 1 : -1)) : edge(i),
              ...(i % 5 === 0
                ? {
                    group_key: "g-crossed",
                    group_label: "crossed",
                    exception_class: "com.acme.Crossed",
                    top_frame: "com.acme.Crossed.run",
                    handled_outcome: "redriven",
                  }
                : {}),
            }),
          ),
        db,
      );
      expect(await markGone(CONN, queue, scan2, db)).toBeGreaterThan(0);
      await expectKeptEqualsRebuilt(queue);
      await db.$executeRawUnsafe(
        `DELETE FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND letter_id IN ('l-1', 'l-2', 'l-4')`,
        CONN,
        queue,
      );
      await expectKeptEqualsRebuilt(queue);
    }
  });

  it("buckets of six hours and of a day add up the hours of letters either side of their boundaries", async () => {
    for (const [days, bucket] of [
      [5, 21_600],
      [20, 86_400],
    ]) {
      const queue = `dlq-${randomUUID()}`;
      // A letter at every third hour (a millisecond before it or at it, in turn), over `days` days.
      const ids = range(0, days * 8);
      await upsertLetters(
        CONN,
        queue,
        randomUUID(),
        ids.map((i) => row(i, { dead_lettered_at: edge(i * 6 + (i % 2)) })),
        db,
      );
      const kept = await expectKeptEqualsRebuilt(queue);
      expect(kept[0].bucket_seconds).toBe(bucket);
    }
  });

  it("concurrent batches writing either side of the same hour boundaries keep exact counts", async () => {
    const queue = `dlq-${randomUUID()}`;
    const scan = randomUUID();
    await Promise.all(
      range(0, 6).map((b) =>
        upsertLetters(
          CONN,
          queue,
          scan,
          // Batch b's letters fall into the same hours as every other batch's.
          range(b * 60, b * 60 + 60).map((i) => row(i, { dead_lettered_at: edge(i % 60) })),
          db,
        ),
      ),
    );
    const kept = await expectKeptEqualsRebuilt(queue);
    expect(kept.reduce((n, g) => n + (g.count as number), 0)).toBe(360);
    expect(kept[0].bucket_seconds).toBe(3600);
  });
});

describe("grouping by origin, reason and class from the kept counts", () => {
  const ROLES = ["viewer", "operator", "admin"] as const;
  const KEYS: GroupByKey[] = ["origin", "reason", "class", "header:x-app-version"];
  const mail = (k: number) => `jane.doe${k}@example.com`;

  it("equals the grouping of the letters' rows, as each role sees it, after every kind of write", async () => {
    const actors = {} as Record<(typeof ROLES)[number], Actor>;
    for (const role of ROLES) {
      const u = await createUser({
        email: `${role}-${randomUUID().slice(0, 8)}@group-stats.test`,
        role,
        password: "a-long-enough-password",
      });
      actors[role] = { id: u.id, email: u.email, name: null, role };
    }
    const queue = `dlq-${randomUUID()}`;
    const meta = () => ({ requestId: randomUUID(), ip: "127.0.0.1" });
    // Origins, reasons and classes quoting e-mail addresses (the default rules mask them), several
    // that mask alike, and letters without a value.
    const letter = (i: number) =>
      row(i, {
        origin_queue: i % 5 === 0 ? null : i % 4 === 0 ? `orders-for-${mail(i % 3)}` : `orders-${i % 7}`,
        reason: i % 6 === 0 ? null : i % 4 === 1 ? `rejected by ${mail(i % 2)}` : ["rejected", "expired"][i % 2],
        exception_class: i % 8 === 0 ? null : i % 4 === 2 ? `com.acme.NoUser_${mail(i % 3)}` : `com.acme.E${i % 3}`,
      });
    const expectSame = async () => {
      for (const by of KEYS) {
        const rows = await queryGroupsByRows(CONN, queue, by, db);
        expect(await queryGroupsBy(CONN, queue, by, db)).toEqual(rows);
        for (const role of ROLES) {
          const seen = await listGroups(actors[role], meta(), { connectionId: CONN, queue, by });
          const policy = await maskingPolicy(role, CONN, queue);
          expect(seen.groups).toEqual(maskValueGroups(by, rows.groups, policy));
          expect(seen.total).toBe(rows.total);
          if (role === "viewer") expect(JSON.stringify(seen)).not.toContain("@example.com");
        }
      }
    };
    const scan1 = randomUUID();
    await upsertLetters(CONN, queue, scan1, range(0, 300).map(letter), db);
    await expectSame();
    // Seen again with other values, some gone, a class regrouped in place, a few deleted.
    const scan2 = randomUUID();
    await upsertLetters(
      CONN,
      queue,
      scan2,
      range(0, 250).map((i) =>
        i % 9 === 0 ? { ...letter(i + 1), letter_id: `l-${i}`, message_id: `m-${i}` } : letter(i),
      ),
      db,
    );
    expect(await markGone(CONN, queue, scan2, db)).toBe(50);
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET exception_class = 'com.acme.Renamed', group_key = 'g-renamed' WHERE connection_id = $1 AND queue = $2 AND exception_class = 'com.acme.E1'`,
      CONN,
      queue,
    );
    await db.$executeRawUnsafe(
      `DELETE FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND letter_id IN ('l-4', 'l-5', 'l-8')`,
      CONN,
      queue,
    );
    await expectSame();
    // Every letter gone: no groups either way.
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2`,
      CONN,
      queue,
    );
    expect(await queryGroupsBy(CONN, queue, "origin", db)).toEqual({ total: 0, groups: [] });
    await expectSame();
  });
});
