import { describe, expect, it } from "vitest";
import { findingsHref, healthHref, parseFindingsParams, parseRange } from "./ui-links";

describe("health page links", () => {
  it("encodes names and leaves the default range out", () => {
    expect(healthHref("local-rabbitmq", "a/b <c>.dlq")).toBe("/dlqs/local-rabbitmq/a%2Fb%20%3Cc%3E.dlq/health");
    expect(healthHref("c", "q", "week")).toBe("/dlqs/c/q/health?range=week");
  });
  it("reads the range, refusing unknown ones", () => {
    expect(parseRange(undefined)).toBe("day");
    expect(parseRange("hour")).toBe("hour");
    expect(parseRange("year")).toBeNull();
  });
});

describe("findings page links", () => {
  it("round-trips a view through its URL", () => {
    const href = findingsHref({
      state: "resolved",
      severity: "critical",
      connection: "local-rabbitmq",
      dlq: "orders&<x>.dlq",
    });
    expect(href).toBe("/findings?state=resolved&severity=critical&connection=local-rabbitmq&dlq=orders%26%3Cx%3E.dlq");
    const sp = Object.fromEntries(new URL(href, "http://x").searchParams);
    expect(parseFindingsParams(sp)).toEqual({
      ok: true,
      value: { state: "resolved", severity: "critical", connection: "local-rabbitmq", dlq: "orders&<x>.dlq" },
    });
    expect(findingsHref()).toBe("/findings");
  });
  it("says what is wrong with a bad link", () => {
    expect(parseFindingsParams({ state: "closed" })).toMatchObject({ ok: false });
    expect(parseFindingsParams({ severity: "fatal" })).toMatchObject({ ok: false });
    expect(parseFindingsParams({})).toEqual({
      ok: true,
      value: { state: "open", severity: null, connection: null, dlq: null },
    });
  });
});
