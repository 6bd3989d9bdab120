import { describe, expect, it } from "vitest";
import { parseLetterFilter } from "./filter-params";

describe("parseLetterFilter", () => {
  it("reads every filter from the URL", () => {
    const f = parseLetterFilter(
      new URLSearchParams(
        "connectionId=c&queue=q&group=g1&class=X&reason=rejected&origin=o&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&header=x-tenant:acme:eu&q=timeout&gone=1",
      ),
    );
    expect(f).toEqual({
      connectionId: "c",
      queue: "q",
      groupKey: "g1",
      exceptionClass: "X",
      reason: "rejected",
      origin: "o",
      from: new Date("2026-01-01T00:00:00Z"),
      to: new Date("2026-01-02T00:00:00Z"),
      header: { name: "x-tenant", value: "acme:eu" },
      text: "timeout",
      includeGone: true,
    });
  });
  it("refuses a missing DLQ, a bad date or a bad header filter", () => {
    expect(() => parseLetterFilter(new URLSearchParams("queue=q"))).toThrow(
      expect.objectContaining({ code: "bad_request:dlq" }),
    );
    expect(() => parseLetterFilter(new URLSearchParams("connectionId=c&queue=q&from=yesterday"))).toThrow(
      expect.objectContaining({ code: "bad_request:filter" }),
    );
    expect(() => parseLetterFilter(new URLSearchParams("connectionId=c&queue=q&header=novalue"))).toThrow(
      expect.objectContaining({ code: "bad_request:filter" }),
    );
  });
});
