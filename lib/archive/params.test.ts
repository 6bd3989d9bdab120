import { describe, expect, it } from "vitest";
import { archiveExportHref, archiveHref, parseArchiveParams } from "./params";

describe("archive URL params", () => {
  it("parses every filter, with UTC dates", () => {
    const r = parseArchiveParams({
      connectionId: "local-rabbitmq",
      queue: "orders.dlq",
      from: "2026-11-01",
      to: "2026-11-02T10:30",
      actor: "alice@",
      reason: "retired",
      state: "restored",
      q: "m-1",
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.filter).toEqual({
      connectionId: "local-rabbitmq",
      queue: "orders.dlq",
      from: new Date("2026-11-01T00:00:00Z"),
      to: new Date("2026-11-02T10:30:00Z"),
      actor: "alice@",
      reason: "retired",
      state: "restored",
      text: "m-1",
    });
  });

  it("refuses a date that is not one and an unknown state, naming the value", () => {
    expect(parseArchiveParams({ from: "yesterday" })).toMatchObject({
      ok: false,
      message: expect.stringContaining('"yesterday"'),
    });
    expect(parseArchiveParams({ state: "gone" })).toMatchObject({ ok: false });
  });

  it("round-trips through the page and export links (same query), ids repeated", () => {
    const raw = { queue: "a b&c", reason: "x" };
    expect(archiveHref(raw, "CUR")).toBe("/archive?queue=a+b%26c&reason=x&after=CUR");
    const href = archiveExportHref(raw, "json", true, ["1", "2"]);
    const u = new URL(href, "http://x");
    expect(u.pathname).toBe("/api/archive/export");
    expect(u.searchParams.getAll("id")).toEqual(["1", "2"]);
    expect(u.searchParams.get("payload")).toBe("1");
    const back = parseArchiveParams(u.searchParams);
    expect(back.ok && back.filter).toEqual({ queue: "a b&c", reason: "x" });
  });

  it("filters by operation: a UUID (case folded) is kept in links and exports; anything else is refused, naming it", () => {
    const op = "0B6F3C1E-2D4A-4F5B-8C9D-0E1F2A3B4C5D";
    const r = parseArchiveParams({ operation: ` ${op} ` });
    expect(r).toMatchObject({ ok: true, filter: { operation: op.toLowerCase() } });
    if (!r.ok) return;
    expect(archiveHref(r.raw)).toBe(`/archive?operation=${op}`);
    const exported = new URL(archiveExportHref({ ...r.raw, connectionId: "c" }, "csv"), "http://x").searchParams;
    expect(parseArchiveParams(exported)).toMatchObject({
      ok: true,
      filter: { connectionId: "c", operation: op.toLowerCase() },
    });
    expect(parseArchiveParams({ operation: "1234abcd" })).toMatchObject({
      ok: false,
      message: expect.stringContaining('"1234abcd" is not an operation id'),
    });
    expect(parseArchiveParams({ operation: "" })).toMatchObject({ ok: true, filter: {} });
  });
});
