import { describe, expect, it } from "vitest";
import { hiddenChars, hiddenCharsLabel } from "./hidden-chars";

describe("hidden characters", () => {
  it("finds an RTL override that disguises a file name, and says it is a direction control", () => {
    const h = hiddenChars("invoice-\u202Egpj.exe")!;
    expect(h).toEqual({ count: 1, bidi: 1, summary: ["U+202E RIGHT-TO-LEFT OVERRIDE"] });
    expect(hiddenCharsLabel(h).label).toBe("direction controls");
    expect(hiddenCharsLabel(h).title).toContain("U+202E RIGHT-TO-LEFT OVERRIDE");
  });

  it("counts zero-width and invisible characters per kind", () => {
    const h = hiddenChars("pay\u200Bpal\u200B.com\u200D\uFEFF")!;
    expect(h.count).toBe(4);
    expect(h.bidi).toBe(0);
    expect(h.summary).toEqual([
      "U+200B ZERO WIDTH SPACE ×2",
      "U+200D ZERO WIDTH JOINER",
      "U+FEFF ZERO WIDTH NO-BREAK SPACE (BOM)",
    ]);
    expect(hiddenCharsLabel(h).label).toBe("invisible characters");
  });

  it("is null for ordinary text, including right-to-left scripts and emoji", () => {
    expect(hiddenChars("order 42 failed: Read timed out")).toBeNull();
    expect(hiddenChars("שלום עולם مرحبا")).toBeNull();
    expect(hiddenChars("deployed by 👩\u200D💻 and 👨🏽\u200D🚀")).toBeNull(); // joiners inside emoji sequences
    expect(hiddenChars("admin\u200Dx")?.count).toBe(1); // a joiner between letters is hidden text
  });

  it("looks at most `limit` characters of a huge text", () => {
    const big = `${"a".repeat(50)}\u202E`;
    expect(hiddenChars(big, 10)).toBeNull();
    expect(hiddenChars(big, 100)?.count).toBe(1);
  });
});
