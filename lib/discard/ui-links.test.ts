import { describe, expect, it } from "vitest";
import { letterDiscardHref, unindexedFromSearch } from "./ui-links";

const SHA = "a".repeat(64);

describe("letterDiscardHref and unindexedFromSearch", () => {
  it("carry one letter's id and its checksum as its page showed it to the discard form", () => {
    const href = letterDiscardHref("local-rabbitmq", "orders.dlq", { id: "ord 1", sha256: SHA });
    expect(href).toBe(`/dlqs/local-rabbitmq/orders.dlq/discard/new?id=ord+1&digest=${SHA}`);
    const search = Object.fromEntries(new URL(href, "http://x").searchParams);
    expect(unindexedFromSearch(search, ["ord 1"])).toEqual({ letterId: "ord 1", digest: SHA });
    expect(unindexedFromSearch({ digest: "hmac:0123456789abcdef" }, ["x"])).toEqual({
      letterId: "x",
      digest: "hmac:0123456789abcdef",
    });
  });

  it("carry nothing without a checksum, so nothing is discarded unguarded", () => {
    expect(unindexedFromSearch({ id: "x" }, ["x"])).toBeNull();
    expect(unindexedFromSearch({ id: "x", digest: "<b>" }, ["x"])).toBeNull();
  });

  it("apply only to a selection of exactly one letter", () => {
    expect(unindexedFromSearch({ digest: SHA }, ["x", "y"])).toBeNull();
  });
});
