import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VERSION_HEADERS } from "./index-row";

/** The triggers that keep triage_group_stats are SQL (a migration): their version headers must be the console's. */
describe("triage_group_stats triggers", () => {
  const dir = join(process.cwd(), "prisma/migrations");
  const folder = readdirSync(dir).find((f) => f.endsWith("_triage_group_stats"))!;
  const sql = readFileSync(join(dir, folder, "migration.sql"), "utf8");

  it("take a letter's version from VERSION_HEADERS, in order, in every delta", () => {
    const lists = [...sql.matchAll(/\('v', COALESCE\(([^)]*)\)\)/g)].map((m) =>
      [...m[1].matchAll(/headers->>'([^']*)'/g)].map((h) => h[1]),
    );
    // insert, update (new and old rows), delete, and the backfill
    expect(lists).toHaveLength(5);
    for (const l of lists) expect(l).toEqual([...VERSION_HEADERS]);
  });

  it("count minutes, origins, versions and reasons of present letters only", () => {
    const deltas = sql.split("CROSS JOIN LATERAL (VALUES").slice(1);
    expect(deltas).toHaveLength(5);
    for (const d of deltas) {
      expect(d).toContain("('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text)");
      expect(d).toContain("('o', t.origin_queue)");
      expect(d).toContain("('r', t.reason)");
      expect(d).toContain("WHERE t.gone_at IS NULL AND d.value IS NOT NULL");
    }
  });
});

/** The later migration that replaces the triggers' functions (hour and class rows beside the others). */
describe("triage_group_stats triggers with hours and classes", () => {
  const dir = join(process.cwd(), "prisma/migrations");
  const folder = readdirSync(dir).find((f) => f.endsWith("_triage_group_stats_hours"))!;
  const sql = readFileSync(join(dir, folder, "migration.sql"), "utf8");

  it("take a letter's version from VERSION_HEADERS, in order, in every delta", () => {
    const lists = [...sql.matchAll(/\('v', COALESCE\(([^)]*)\)\)/g)].map((m) =>
      [...m[1].matchAll(/headers->>'([^']*)'/g)].map((h) => h[1]),
    );
    // insert, update (new and old rows), delete
    expect(lists).toHaveLength(4);
    for (const l of lists) expect(l).toEqual([...VERSION_HEADERS]);
  });

  it("count minutes, hours, origins, versions, reasons and classes of present letters only", () => {
    const deltas = sql.split("CROSS JOIN LATERAL (VALUES").slice(1);
    expect(deltas).toHaveLength(4);
    for (const d of deltas) {
      expect(d).toContain("('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text)");
      expect(d).toContain("('h', (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint::text)");
      expect(d).toContain("('o', t.origin_queue)");
      expect(d).toContain("('r', t.reason)");
      expect(d).toContain("('c', t.exception_class)");
      expect(d).toContain("WHERE t.gone_at IS NULL AND d.value IS NOT NULL");
    }
    // Handled letters are counted per minute and per hour, in every delta.
    expect(sql.split("CASE WHEN d.kind IN ('m', 'h') AND t.handled_outcome IS NOT NULL")).toHaveLength(5);
    expect(sql).not.toContain("CASE WHEN d.kind = 'm'");
  });
});

/** The migration that aggregates a statement's letters before expanding them into counted values. */
describe("triage_group_stats insert and update triggers, pre-aggregated", () => {
  const dir = join(process.cwd(), "prisma/migrations");
  const folder = readdirSync(dir).find((f) => f.endsWith("_triage_group_stats_preaggregate"))!;
  const sql = readFileSync(join(dir, folder, "migration.sql"), "utf8");

  it("take a letter's version from VERSION_HEADERS, in order, in every delta", () => {
    const lists = [...sql.matchAll(/COALESCE\(([^)]*)\) AS version/g)].map((m) =>
      [...m[1].matchAll(/headers->>'([^']*)'/g)].map((h) => h[1]),
    );
    // insert, update (new and old rows)
    expect(lists).toHaveLength(3);
    for (const l of lists) expect(l).toEqual([...VERSION_HEADERS]);
  });

  it("count minutes, hours, origins, versions, reasons and classes of present letters, by the same expressions", () => {
    const deltas = sql.split("FROM (\n        SELECT connection_id").slice(1);
    expect(deltas).toHaveLength(3);
    for (const d of deltas) {
      expect(d).toContain("(floor(extract(epoch FROM arrived_at) / 60) * 60)::bigint::text AS minute_at");
      expect(d).toContain("(floor(extract(epoch FROM arrived_at) / 3600) * 3600)::bigint::text AS hour_at");
      expect(d).toContain("count(*)::int AS n, count(handled_outcome)::int AS h");
      expect(d).toContain("WHERE gone_at IS NULL GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9");
      expect(d).toContain(
        "('m', t.minute_at), ('h', t.hour_at), ('o', t.origin_queue), ('v', t.version), ('r', t.reason), ('c', t.exception_class)",
      );
      expect(d).toContain("WHERE d.value IS NOT NULL");
    }
    // Handled letters are counted per minute and per hour, in every delta.
    expect(sql.split("CASE WHEN d.kind IN ('m', 'h') THEN")).toHaveLength(4);
    expect(sql).toContain("SET enable_nestloop = off SET jit = off");
  });
});
