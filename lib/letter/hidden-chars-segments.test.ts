import { describe, expect, it } from "vitest";
import { hiddenCharSegments, hiddenCharsIn, hiddenCharsSentence } from "./hidden-chars";

const BIDI = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
const INVISIBLE = [0x00ad, 0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff, 0x180e, 0x3164];

/** The segments as a code host would print them: `invoice-⟨U+202E⟩gpj.exe`. */
const shown = (text: string) =>
  hiddenCharSegments(text)
    .segments.map((s) => (typeof s === "string" ? s : `⟨${s.label}⟩`))
    .join("");

describe("hidden characters marked where they stand", () => {
  it("marks an RTL override inside a file name, keeping the real character for copying", () => {
    expect(shown("invoice-\u202Egpj.exe")).toBe("invoice-⟨U+202E⟩gpj.exe");
    const { segments } = hiddenCharSegments("invoice-\u202Egpj.exe");
    expect(segments).toEqual([
      "invoice-",
      { char: "\u202E", cp: 0x202e, label: "U+202E", name: "RIGHT-TO-LEFT OVERRIDE", bidi: true },
      "gpj.exe",
    ]);
  });

  it("marks every direction control as such, and every invisible character as invisible", () => {
    for (const cp of BIDI) {
      const s = hiddenCharSegments(`a${String.fromCodePoint(cp)}b`).segments;
      expect(s[1], cp.toString(16)).toMatchObject({ cp, bidi: true });
    }
    for (const cp of INVISIBLE) {
      const s = hiddenCharSegments(`a${String.fromCodePoint(cp)}b`).segments;
      expect(s[1], cp.toString(16)).toMatchObject({ cp, bidi: false });
    }
    const all = BIDI.map((c) => String.fromCodePoint(c)).join("");
    expect(hiddenCharsIn([all])).toMatchObject({ count: BIDI.length, bidi: BIDI.length });
  });

  it("marks tag characters (invisible ASCII smuggling) but not the tags of a subdivision flag", () => {
    const smuggled = `ok${[..."rm -rf"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("")}`;
    expect(shown(smuggled)).toBe("ok⟨U+E0072⟩⟨U+E006D⟩⟨U+E0020⟩⟨U+E002D⟩⟨U+E0072⟩⟨U+E0066⟩");
    const england = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}";
    expect(shown(`flag ${england}`)).toBe(`flag ${england}`);
  });

  it("leaves combining marks, right-to-left scripts and emoji sequences alone", () => {
    for (const t of ["e\u0301 n\u0303 a\u0308\u0301\u0323", "שלום עולם مرحبا", "👩\u200D💻 👨🏽\u200D🚀", "Zalgơ̸̢͇̳"])
      expect(hiddenCharSegments(t).segments, t).toEqual([t]);
  });

  it("survives lone surrogates without marking or dropping them", () => {
    const t = "a\uD800b\uDC00c\u202Ed\uDBFF";
    expect(shown(t)).toBe("a\uD800b\uDC00c⟨U+202E⟩d\uDBFF");
    expect(hiddenCharSegments("\uD800").segments).toEqual(["\uD800"]);
  });

  it("stops making markers past the cap on a 1 MB payload, keeping every character", () => {
    const big = "x\u200B".repeat(512 * 1024);
    const r = hiddenCharSegments(big, 1000);
    expect(r.unmarked).toBe(true);
    expect(r.segments.filter((s) => typeof s !== "string")).toHaveLength(1000);
    expect(r.segments.map((s) => (typeof s === "string" ? s : s.char)).join("")).toBe(big);
    const plain = "y".repeat(1024 * 1024);
    expect(hiddenCharSegments(plain).segments).toEqual([plain]);
  });

  it("is one segment for the empty string", () => {
    expect(hiddenCharSegments("").segments).toEqual([""]);
  });

  it("says for a whole letter how many of each kind it holds", () => {
    const h = hiddenCharsIn(["invoice-\u202Egpj.exe", "pay\u200Bpal", "x\u2066y\u2069"])!;
    expect(hiddenCharsSentence(h)).toBe(
      "This letter contains 3 direction-control characters and 1 invisible character, shown as ⟨U+…⟩ where they stand.",
    );
    expect(hiddenCharsSentence(hiddenCharsIn(["a\u202Eb"])!)).toMatch(/contains 1 direction-control character,/);
    expect(hiddenCharsIn(["plain", "text"])).toBeNull();
  });
});
