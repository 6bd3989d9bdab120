import { describe, expect, it } from "vitest";
import { entriesText, typeOf } from "./display-value";
import { base64ToHex, valueText } from "@/lib/text";
import type { DisplayValue } from "@/lib/brokers/contract/letter";

describe("valueText", () => {
  it("renders scalars", () => {
    expect(valueText({ t: "string", v: "<script>alert(1)</script>" })).toBe("<script>alert(1)</script>");
    expect(valueText({ t: "number", v: "9007199254740993" })).toBe("9007199254740993");
    expect(valueText({ t: "boolean", v: false })).toBe("false");
    expect(valueText({ t: "null" })).toBe("null");
  });
  it("renders bytes as text when valid UTF-8, else hex", () => {
    expect(valueText({ t: "bytes", v: "aGk=", size: 2, text: "hi" })).toBe("hi");
    expect(valueText({ t: "bytes", v: "AP8=", size: 2 })).toBe("00 ff");
  });
  it("renders nested arrays and tables", () => {
    const v: DisplayValue = {
      t: "array",
      v: [
        {
          t: "table",
          v: [
            ["queue", { t: "string", v: "orders" }],
            ["count", { t: "number", v: "2" }],
          ],
        },
      ],
    };
    expect(valueText(v)).toBe("- queue: orders\n  count: 2");
    expect(typeOf(v)).toBe("array[1]");
  });
  it("copies a header table as lines", () => {
    expect(
      entriesText([
        { name: "a", value: { t: "string", v: "1" } },
        { name: "b", value: { t: "null" } },
      ]),
    ).toBe("a: 1\nb: null");
  });
  it("caps hex output", () => {
    expect(base64ToHex(btoa("abcdef"), 3)).toEqual({ hex: "61 62 63", cut: true });
  });
});
