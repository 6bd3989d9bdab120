import { describe, expect, it } from "vitest";
import { archiveExportHref, archiveHref, parseArchiveParams } from "./params";

describe("archive URL params", () => {
  it("parses every filter, with UTC dates", () => {
    const r = parseArchiveParams({ connectionId: "local-rabbitmq", queue: "orders.dlq", from: "2026-11-01", to: "2026-11-02T10:30", actor: "alice@", reason: "retired", state: "restored", q: "m-1" });
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
    expect(parseArchiveParams({ from: "yesterday" })).toMatchObject({ ok: false, message: expect.stringContaining('"yesterday"') });
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
});
