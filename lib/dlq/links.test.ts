import { describe, expect, it } from "vitest";
import { dlqHref, letterHref, parsePaging, payloadHref } from "./links";

describe("links", () => {
  it("encodes segments", () => {
    expect(dlqHref("local", "orders.dlq")).toBe("/dlqs/local/orders.dlq");
    expect(dlqHref("local", "a/b c", { page: 2, size: 100 })).toBe("/dlqs/local/a%2Fb%20c?page=2&size=100");
    expect(letterHref("local", "q", "fp:abc#2")).toBe("/dlqs/local/q/letters/fp%3Aabc%232");
    expect(payloadHref("local", "q", "m1")).toBe("/api/dlqs/local/q/letters/m1/payload");
  });
  it("bounds paging", () => {
    expect(parsePaging(undefined, undefined)).toEqual({ page: 1, size: 50 });
    expect(parsePaging("3", "1000")).toEqual({ page: 3, size: 200 });
    expect(parsePaging("-1", "abc")).toEqual({ page: 1, size: 50 });
  });
});
