import { describe, expect, it } from "vitest";
import { parseBrowseParams } from "./browse-params";
import { dlqHref } from "./links";

describe("parseBrowseParams", () => {
  it("defaults to all partitions, oldest first", () => {
    expect(parseBrowseParams({})).toEqual({
      ok: true,
      value: { page: 1, size: 50, partition: null, from: null, order: "oldest" },
    });
  });
  it("reads partition, from offset (kept as text) and order", () => {
    expect(parseBrowseParams({ partition: "2", from: "9007199254740993", order: "newest", page: "3" })).toEqual({
      ok: true,
      value: { page: 3, size: 50, partition: 2, from: "9007199254740993", order: "newest" },
    });
  });
  it("treats empty fields as absent", () => {
    expect(parseBrowseParams({ partition: "", from: "", order: "" })).toMatchObject({
      ok: true,
      value: { partition: null, from: null, order: "oldest" },
    });
  });
  it("refuses what is not digits, unknown orders, repeated params and a from offset without partition", () => {
    expect(parseBrowseParams({ partition: "0", from: "12a" })).toEqual({
      ok: false,
      message: "From offset must be digits only, such as 1200.",
    });
    expect(parseBrowseParams({ partition: "-1" })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/Partition must be a whole number/),
    });
    expect(parseBrowseParams({ order: "sideways" })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/oldest/),
    });
    expect(parseBrowseParams({ partition: ["0", "1"] })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/once/),
    });
    expect(parseBrowseParams({ from: "5" })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/needs a partition/),
    });
  });
  it("round-trips through dlqHref", () => {
    const href = dlqHref("k", "t.DLT", { partition: 0, from: "123", order: "newest", page: 2 });
    expect(href).toBe("/dlqs/k/t.DLT?partition=0&from=123&order=newest&page=2");
    const sp = Object.fromEntries(new URL(href, "http://x").searchParams);
    expect(parseBrowseParams(sp)).toMatchObject({
      ok: true,
      value: { partition: 0, from: "123", order: "newest", page: 2 },
    });
    expect(dlqHref("k", "t", { from: "5" })).toBe("/dlqs/k/t");
  });
});
