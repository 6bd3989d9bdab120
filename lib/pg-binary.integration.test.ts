import { Pool } from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { binaryArray } from "@/lib/pg-binary";

/** What Postgres's array_recv makes of the arrays node-postgres sends as binary parameters. */
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
afterAll(() => pool.end());

describe("binary arrays through Postgres", () => {
  it("round-trips text, int, boolean and bytea elements, NULLs included, in order", async () => {
    const text = ["plain", null, "", 'é€😀 "quoted" {braces} back\\slash, comma', "x".repeat(5000)];
    const ints = [0, -2147483648, 2147483647, null, 42];
    const bools = [true, false, null, true, false];
    const bytes = [Buffer.from([0, 1, 255]), null, Buffer.alloc(0), Buffer.from("\\x00"), Buffer.alloc(3000, 7)];
    const r = await pool.query({
      text: "SELECT t, i, b, y, ord FROM unnest($1::text[], $2::int[], $3::boolean[], $4::bytea[]) WITH ORDINALITY AS r(t, i, b, y, ord) ORDER BY ord",
      values: [
        binaryArray("text", text),
        binaryArray("int4", ints),
        binaryArray("bool", bools),
        binaryArray("bytea", bytes),
      ],
    });
    expect(r.rows.map((x) => x.t)).toEqual(text);
    expect(r.rows.map((x) => x.i)).toEqual(ints);
    expect(r.rows.map((x) => x.b)).toEqual(bools);
    expect(r.rows.map((x) => (x.y === null ? null : Buffer.from(x.y).toString("hex")))).toEqual(
      bytes.map((b) => (b === null ? null : b.toString("hex"))),
    );
  });

  it("text cast to jsonb and timestamptz in SQL, as the bulk upsert does", async () => {
    const r = await pool.query({
      text: "SELECT h::jsonb AS h, d::timestamptz AS d FROM unnest($1::text[], $2::text[]) AS r(h, d)",
      values: [binaryArray("text", ['{"x-a":"é"}', null]), binaryArray("text", ["2026-11-30T10:00:00.123Z", null])],
    });
    expect(r.rows[0]).toEqual({ h: { "x-a": "é" }, d: new Date("2026-11-30T10:00:00.123Z") });
    expect(r.rows[1]).toEqual({ h: null, d: null });
  });
});
