import { describe, expect, it } from "vitest";
import { safeCallbackPath } from "./callback-url";

describe("safeCallbackPath", () => {
  it("keeps paths on this console, with their query and fragment", () => {
    expect(safeCallbackPath("/dlqs/local-rabbitmq/orders.dlq?page=2#letters")).toBe(
      "/dlqs/local-rabbitmq/orders.dlq?page=2#letters",
    );
    expect(safeCallbackPath(["/audit", "/other"])).toBe("/audit");
  });

  it("sends anything that a browser would read as another origin home, however it is spelled", () => {
    for (const v of [
      "/\t/evil.example",
      "/\n/evil.example",
      "/\r\n/evil.example",
      "//evil.example",
      "/\\evil.example",
      "/\\/evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      " /evil",
      "",
    ]) {
      expect(safeCallbackPath(v), JSON.stringify(v)).toBe("/");
    }
    expect(safeCallbackPath(undefined)).toBe("/");
  });
});
