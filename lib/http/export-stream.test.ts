import { describe, expect, it } from "vitest";
import { exportChunks, exportFormat } from "./export-stream";

async function* gen(n: number) {
  for (let i = 0; i < n; i++) yield { id: i, note: `row "${i}"` };
}
const toCsv = (batch: Array<{ id: number; note: string }>, header: boolean) =>
  (header ? "id,note\r\n" : "") + batch.map((r) => `${r.id},"${r.note.replace(/"/g, '""')}"\r\n`).join("");

async function text(stream: ReadableStream<Uint8Array>) {
  return await new Response(stream).text();
}

describe("exportChunks", () => {
  it("writes one JSON array across batches, and [] when empty", async () => {
    const out = await text(exportChunks({ rows: gen(5), format: "json", toCsv, batchSize: 2 }));
    expect(JSON.parse(out).map((r: { id: number }) => r.id)).toEqual([0, 1, 2, 3, 4]);
    expect(JSON.parse(await text(exportChunks({ rows: gen(0), format: "json", toCsv })))).toEqual([]);
    expect(JSON.parse(await text(exportChunks({ rows: gen(2), format: "json", toCsv, batchSize: 2 })))).toHaveLength(2);
  });

  it("writes the CSV header once, also for an empty export, and applies the row map", async () => {
    const out = await text(
      exportChunks({ rows: gen(5), format: "csv", toCsv, batchSize: 2, map: (r) => ({ ...r, note: "masked" }) }),
    );
    const lines = out.trim().split("\r\n");
    expect(lines[0]).toBe("id,note");
    expect(lines).toHaveLength(6);
    expect(lines.slice(1).every((l) => l.endsWith(',"masked"'))).toBe(true);
    expect(await text(exportChunks({ rows: gen(0), format: "csv", toCsv }))).toBe("id,note\r\n");
  });

  it("pulls rows only as the consumer reads (bounded memory)", async () => {
    let produced = 0;
    async function* counting() {
      for (let i = 0; i < 10_000; i++) {
        produced++;
        yield { id: i, note: "" };
      }
    }
    const reader = exportChunks({ rows: counting(), format: "csv", toCsv, batchSize: 100 }).getReader();
    await reader.read();
    expect(produced).toBeLessThanOrEqual(300);
    await reader.cancel();
  });
});

describe("exportChunks' first chunk", () => {
  it("is small (the first bytes wait for 50 rows, not a whole batch), and every row still comes once", async () => {
    let produced = 0;
    async function* counting() {
      for (let i = 0; i < 1000; i++) {
        produced++;
        yield { id: i, note: "" };
      }
    }
    const reader = exportChunks({
      rows: counting(),
      format: "csv",
      toCsv: (b: Array<{ id: number }>, h: boolean) => `${h ? "id\n" : ""}${b.map((r) => `${r.id}\n`).join("")}`,
      batchSize: 200,
    }).getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first.trim().split("\n")).toHaveLength(51);
    expect(produced).toBeLessThanOrEqual(51);
    let rest = "";
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      rest += new TextDecoder().decode(r.value);
    }
    expect((first + rest).trim().split("\n").slice(1).map(Number)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });
});

describe("exportFormat", () => {
  it("reads csv (the default) or json, and refuses anything else with a clear 400", () => {
    expect(exportFormat(new URLSearchParams())).toBe("csv");
    expect(exportFormat(new URLSearchParams("format=json"))).toBe("json");
    expect(() => exportFormat(new URLSearchParams("format=xml"))).toThrow(
      expect.objectContaining({ code: "bad_request:format" }),
    );
  });
});
