import { describe, expect, it } from "vitest";
import {
  appliedFilters,
  EMPTY_VIEW,
  exportHref,
  filterForValue,
  isoToUtcInput,
  nextSort,
  parseTriageParams,
  sortGroups,
  toLetterFilter,
  triageHref,
  utcInputToIso,
  withFilter,
} from "./view-params";

describe("parseTriageParams", () => {
  it("defaults to the exception grouping with no filters", () => {
    expect(parseTriageParams({})).toEqual({ ok: true, value: EMPTY_VIEW });
  });

  it("reads every filter, the grouping key, sort and cursor", () => {
    const r = parseTriageParams({
      by: "header:x-tenant",
      group: "abc123",
      class: "java.lang.NullPointerException",
      reason: "rejected",
      origin: "orders",
      from: "2025-01-31T14:05:00Z",
      to: "2025-02-01T00:00:00.000Z",
      header: "x-app-version:1.2:3",
      q: "  declined ",
      gone: "1",
      after: "WyIyMDI1Il0",
      sort: "-last",
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toMatchObject({
      by: "header:x-tenant",
      group: "abc123",
      exceptionClass: "java.lang.NullPointerException",
      reason: "rejected",
      origin: "orders",
      from: "2025-01-31T14:05:00.000Z",
      to: "2025-02-01T00:00:00.000Z",
      header: { name: "x-app-version", value: "1.2:3" },
      q: "declined",
      gone: true,
      after: "WyIyMDI1Il0",
      sort: { key: "last", dir: "desc" },
    });
  });

  it("treats blank params as absent", () => {
    expect(parseTriageParams({ class: "", q: "   ", from: "" })).toEqual({ ok: true, value: EMPTY_VIEW });
  });

  it.each([
    [{ by: "payload" }, "Group by"],
    [{ by: "header:" }, "Group by"],
    [{ from: "yesterday" }, "date and time"],
    [{ header: "novalue" }, "name:value"],
    [{ header: ":x" }, "name:value"],
    [{ gone: "yes" }, "gone"],
    [{ after: "not a cursor!" }, "cursor"],
    [{ sort: "payload" }, "Sort"],
    [{ class: ["a", "b"] }, "once"],
    [{ from: "2025-02-01T00:00:00Z", to: "2025-01-01T00:00:00Z" }, "swap"],
  ])("explains a bad URL %j", (sp, words) => {
    const r = parseTriageParams(sp as Record<string, string | string[]>);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain(words);
  });
});

describe("triageHref", () => {
  it("round-trips through parseTriageParams", () => {
    const view = {
      ...EMPTY_VIEW,
      by: "origin" as const,
      group: "g1",
      header: { name: "h", value: "a b&c" },
      q: "x/y",
      from: "2025-01-31T14:05:00.000Z",
      sort: { key: "label" as const, dir: "asc" as const },
      after: "abc_-1",
    };
    const href = triageHref("local rabbit", "demo/billing.dlq", view);
    expect(href.startsWith("/dlqs/local%20rabbit/demo%2Fbilling.dlq/triage?")).toBe(true);
    const sp = Object.fromEntries(new URL(href, "http://x").searchParams);
    expect(parseTriageParams(sp)).toEqual({ ok: true, value: view });
  });

  it("leaves defaults out of the URL", () => {
    expect(triageHref("c", "q", EMPTY_VIEW)).toBe("/dlqs/c/q/triage");
  });

  it("withFilter resets the cursor", () => {
    const v = { ...EMPTY_VIEW, after: "abc" };
    expect(withFilter(v, { reason: "expired" })).toMatchObject({ after: null, reason: "expired" });
  });
});

describe("exportHref", () => {
  it("carries the same filters as the page, in parseLetterFilter's names", () => {
    const href = exportHref(
      "c1",
      "q1",
      { ...EMPTY_VIEW, group: "g", header: { name: "x", value: "1" }, gone: true, after: "zzz", by: "reason" },
      "csv",
    );
    const p = new URL(href, "http://x").searchParams;
    expect(Object.fromEntries(p)).toEqual({
      format: "csv",
      connectionId: "c1",
      queue: "q1",
      group: "g",
      header: "x:1",
      gone: "1",
    });
    expect(exportHref("c1", "q1", EMPTY_VIEW, "json", true)).toContain("payload=1");
  });
});

describe("toLetterFilter", () => {
  it("maps the view to the backend filter", () => {
    const f = toLetterFilter("c", "q", {
      ...EMPTY_VIEW,
      exceptionClass: "E",
      from: "2025-01-01T00:00:00.000Z",
      gone: true,
    });
    expect(f).toMatchObject({ connectionId: "c", queue: "q", exceptionClass: "E", includeGone: true });
    expect(f.from?.toISOString()).toBe("2025-01-01T00:00:00.000Z");
    expect(f.groupKey).toBeUndefined();
  });
});

describe("appliedFilters", () => {
  it("lists each filter with the view that removes it", () => {
    const v = { ...EMPTY_VIEW, group: "g", reason: "rejected", after: "cur" };
    const chips = appliedFilters(v, (k) => (k === "g" ? "NPE @ Foo" : undefined));
    expect(chips.map((c) => [c.key, c.value])).toEqual([
      ["group", "NPE @ Foo"],
      ["reason", "rejected"],
    ]);
    expect(chips[0].without).toMatchObject({ group: null, reason: "rejected", after: null });
  });
});

describe("filterForValue", () => {
  it("selects a value of each grouping key", () => {
    expect(filterForValue("origin", "orders")).toEqual({ origin: "orders" });
    expect(filterForValue("class", "E")).toEqual({ exceptionClass: "E" });
    expect(filterForValue("header:x-v", "2")).toEqual({ header: { name: "x-v", value: "2" } });
    expect(filterForValue("reason", null)).toBeNull();
  });
});

describe("UTC inputs", () => {
  it("reads datetime-local values as UTC", () => {
    expect(utcInputToIso("2025-01-31T14:05")).toBe("2025-01-31T14:05:00.000Z");
    expect(utcInputToIso("2025-01-31T14:05:09")).toBe("2025-01-31T14:05:09.000Z");
    expect(utcInputToIso("")).toBeNull();
    expect(utcInputToIso("31/01/2025")).toBeNull();
  });
  it("writes ISO back for the input", () => {
    expect(isoToUtcInput("2025-01-31T14:05:00.000Z")).toBe("2025-01-31T14:05");
    expect(isoToUtcInput("2025-01-31T14:05:09.000Z")).toBe("2025-01-31T14:05:09");
    expect(isoToUtcInput(null)).toBe("");
  });
});

describe("sortGroups", () => {
  const g = (label: string, count: number, lastAt: string) => ({
    label,
    count,
    firstAt: "2025-01-01T00:00:00Z",
    lastAt,
  });
  const groups = [
    g("b", 2, "2025-01-03T00:00:00Z"),
    g("a", 5, "2025-01-02T00:00:00Z"),
    g("c", 2, "2025-01-04T00:00:00Z"),
  ];
  it("sorts by each column, ties by count then label", () => {
    expect(sortGroups(groups, { key: "count", dir: "desc" }).map((x) => x.label)).toEqual(["a", "b", "c"]);
    expect(sortGroups(groups, { key: "count", dir: "asc" }).map((x) => x.label)).toEqual(["b", "c", "a"]);
    expect(sortGroups(groups, { key: "last", dir: "desc" }).map((x) => x.label)).toEqual(["c", "b", "a"]);
    expect(sortGroups(groups, { key: "label", dir: "asc" }).map((x) => x.label)).toEqual(["a", "b", "c"]);
    expect(sortGroups(groups, { key: "first", dir: "desc" }).map((x) => x.label)).toEqual(["a", "b", "c"]);
  });
  it("does not mutate its input", () => {
    const copy = [...groups];
    sortGroups(groups, { key: "label", dir: "desc" });
    expect(groups).toEqual(copy);
  });
  it("nextSort flips the same column and starts a new one descending", () => {
    expect(nextSort({ key: "count", dir: "desc" }, "count")).toEqual({ key: "count", dir: "asc" });
    expect(nextSort({ key: "count", dir: "desc" }, "last")).toEqual({ key: "last", dir: "desc" });
    expect(nextSort({ key: "count", dir: "desc" }, "label")).toEqual({ key: "label", dir: "asc" });
  });
});
