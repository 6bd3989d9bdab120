import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  checkGlob,
  compileGlob,
  GLOB_MAX_LENGTH,
  GLOB_MAX_STARS,
  globMatch,
  globMatchSteps,
  globProblem,
} from "./glob";

/** The matcher this one replaced (backtracking RegExp), as the reference for what every glob means. */
function oldGlobRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "is");
}
/** Pulsar's case-sensitive use of it. */
const oldExact = (glob: string) => new RegExp(oldGlobRegExp(glob).source, "s");
/** Kafka discovery's own copy: case-sensitive, and without the `s` flag. */
const oldKafka = (glob: string) => new RegExp(oldGlobRegExp(glob).source);

/** The most steps a match may take: every name character once per shift-and word, plus the pattern. */
function stepBound(glob: string, value: string): number {
  const longest = Math.max(1, ...glob.split("*").map((s) => s.length));
  return value.length * Math.ceil(longest / 32) + glob.length;
}

/** A small deterministic PRNG (mulberry32): the same cases on every run. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TABLE: Array<[string, string[]]> = [
  ["", ["", "a", " "]],
  ["*", ["", "a", "orders.dlq", "\n", "line\nbreak"]],
  ["**", ["", "x"]],
  ["?", ["", "a", "ab", "\n", "😀", "\uD83D"]],
  ["??", ["😀", "ab", "a"]],
  ["orders.*", ["orders.dlq", "ORDERS.DLQ", "orders.", "orders", "ordersXdlq", "x.orders.dlq"]],
  ["*.dlq", [".dlq", "a.dlq", "a.DLQ", "a.dlqx", "adlq"]],
  ["*password*", ["password", "x-Password-hash", "passwor", "PASSWORD", "pass word"]],
  ["a*b*c", ["abc", "aXbYc", "acb", "abcc", "aabbcc", "ab", "abbc"]],
  ["a*a", ["a", "aa", "aaa", "aba"]],
  ["*a*a*", ["a", "aa", "baab", "bab"]],
  ["a?c", ["abc", "aBc", "ac", "abbc", "a\nc"]],
  ["*?*", ["", "x", "xy"]],
  ["?*?", ["x", "xy", "xyz"]],
  ["*ab?d*", ["abcd", "aabxd", "abd", "xxabqdyy", "ab\ndZ"]],
  ["x-*-id", ["x-request-id", "x--id", "x-id", "X-TRACE-ID"]],
  ["a.b+c^d$e{f}g(h)i|j[k]l\\m/n-o", ["a.b+c^d$e{f}g(h)i|j[k]l\\m/n-o", "aXb+c^d$e{f}g(h)i|j[k]l\\m/n-o"]],
  ["[a-z]", ["[a-z]", "a", "[A-Z]"]],
  ["\\*", ["\\", "\\abc", "*"]],
  ["straße", ["STRASSE", "STRAßE", "straße", "strasse"]],
  ["s", ["s", "S", "ſ"]],
  ["ſ", ["ſ", "s", "S"]],
  ["k", ["k", "K", "\u212A"]],
  ["\u212A", ["\u212A", "k", "K"]],
  ["σ*", ["Σ", "ς", "σx", "ΣΣ"]],
  ["i", ["I", "ı", "İ", "i"]],
  ["ı", ["I", "i", "ı"]],
  ["é*", ["É", "éa", "e"]],
  ["*😀", ["a😀", "😀", "😁"]],
  ["\uD83D*", ["😀", "\uD83D"]],
  ["ǅ", ["ǅ", "Ǆ", "ǆ"]],
  ["ﬀ", ["ﬀ", "FF", "ff"]],
];

describe("globMatch keeps the old RegExp's meaning", () => {
  it("on a table of patterns and names, case-insensitive and case-sensitive", () => {
    for (const [glob, values] of TABLE)
      for (const value of values) {
        expect([glob, value, globMatch(glob, value)]).toEqual([glob, value, oldGlobRegExp(glob).test(value)]);
        expect([glob, value, globMatch(glob, value, { caseSensitive: true })]).toEqual([
          glob,
          value,
          oldExact(glob).test(value),
        ]);
      }
  });

  it("on 30,000 generated patterns and names over tricky characters", () => {
    const chars = [
      "a",
      "A",
      "b",
      "B",
      ".",
      "\\",
      "[",
      "\n",
      "ß",
      "ſ",
      "s",
      "S",
      "\u212A",
      "k",
      "ς",
      "Σ",
      "ı",
      "İ",
      "😀",
    ];
    const next = rng(31);
    const pick = (xs: string[]) => xs[Math.floor(next() * xs.length)];
    const text = (max: number, extra: string[]) =>
      Array.from({ length: Math.floor(next() * (max + 1)) }, () => pick([...chars, ...extra])).join("");
    let matched = 0;
    for (let i = 0; i < 30_000; i++) {
      const glob = text(7, ["*", "*", "?"]);
      // Half the names are made from the pattern (stars and `?` filled in, letters' case flipped), so both answers come often.
      const value =
        next() < 0.5
          ? text(10, ["*", "?"])
          : [...glob]
              .map((c) => (c === "*" ? text(3, []) : c === "?" ? pick(chars) : next() < 0.3 ? c.toUpperCase() : c))
              .join("");
      const want = oldGlobRegExp(glob).test(value);
      if (globMatch(glob, value) !== want)
        expect({ glob, value, matched: !want }).toEqual({ glob, value, matched: want });
      if (globMatch(glob, value, { caseSensitive: true }) !== oldExact(glob).test(value))
        expect({ glob, value, exact: true }).toBe(null);
      const { steps } = globMatchSteps(glob, value);
      if (steps > stepBound(glob, value)) expect({ glob, value, steps }).toBe(null);
      if (want) matched++;
    }
    // The generator makes both answers often enough to test something.
    expect(matched).toBeGreaterThan(6000);
    expect(matched).toBeLessThan(24_000);
  });

  it("as Kafka's own copy on topic names (which cannot hold line breaks)", () => {
    const next = rng(7);
    const chars = ["a", "b", "A", ".", "-", "_", "0"];
    const text = (max: number, extra: string[]) =>
      Array.from(
        { length: Math.floor(next() * (max + 1)) },
        () => [...chars, ...extra][Math.floor(next() * (chars.length + extra.length))],
      ).join("");
    for (let i = 0; i < 5000; i++) {
      const glob = text(6, ["*", "?"]);
      const value = text(9, []);
      if (compileGlob(glob, { caseSensitive: true }).test(value) !== oldKafka(glob).test(value))
        expect({ glob, value }).toBe(null);
    }
  });

  it("compileGlob answers like globMatch, and segments longer than 32 characters match", () => {
    const long = `${"ab".repeat(40)}?c`; // 82 characters: three shift-and words
    const name = `x${"ab".repeat(40)}zc y ${"AB".repeat(40)}Qc tail`;
    for (const glob of [`*${long}*`, `*${long} tail`, `x${long}*`, `*${long}`]) {
      expect(compileGlob(glob).test(name)).toBe(oldGlobRegExp(glob).test(name));
      expect(globMatch(glob, name, { caseSensitive: true })).toBe(oldExact(glob).test(name));
    }
    // Segments at the word edges: 31, 32, 33, 64 and 65 characters, found and not found.
    for (const len of [31, 32, 33, 64, 65]) {
      const seg = `${"xy?".repeat(22).slice(0, len - 1)}z`;
      const hay = `--${seg.replace(/\?/g, "Q")}--`;
      for (const [glob, value] of [
        [`*${seg}*`, hay],
        [`*${seg}*`, hay.replace("z", "y")],
        [`-*${seg}*-`, hay],
        [`*${seg}-`, hay.slice(0, -1)],
        [`*X${seg}*`, hay],
      ])
        expect([glob, globMatch(glob, value)]).toEqual([glob, oldGlobRegExp(glob).test(value)]);
    }
    expect(globMatch(`*${long}*`, name)).toBe(true);
    expect(globMatch(`*${"AB".repeat(40)}?c*`, name, { caseSensitive: true })).toBe(true);
    expect(globMatch(`*${"AB".repeat(40)}zc*`, name, { caseSensitive: true })).toBe(false);
  });
});

describe("hostile patterns and names", () => {
  const A60 = "a".repeat(60);

  it("*a*a*a*a*a*a*b against a 60-character name takes a step per character (the old matcher: 7 s)", () => {
    for (const glob of ["*a*a*a*a*a*a*b", "*a*a*a*a*a*a*a*a*b", "*a*a*a*a*a*a*b*", "*?a*?a*?a*?a*?a*?a*?b?*"]) {
      const r = globMatchSteps(glob, A60);
      expect(r.matched).toBe(false);
      expect(r.steps).toBeLessThanOrEqual(A60.length + glob.length);
    }
  });

  it("50-star globs and long segments against 1 MB names stay linear, counted in steps", () => {
    const mb = "a".repeat(1 << 20);
    const cases = [
      `${"*a".repeat(49)}*b`, // the tail fails at once
      `${"*a".repeat(49)}*b*`, // every middle segment found, the last one scans the rest
      `${"*aa?".repeat(49)}*ab*`,
      `*${"a".repeat(200)}b*`, // seven shift-and words; a naive search would compare 200 per position
      `*${"?".repeat(31)}b*`,
    ];
    for (const glob of cases) {
      const r = globMatchSteps(glob, mb);
      expect(r.matched).toBe(false);
      expect(r.steps).toBeLessThanOrEqual(stepBound(glob, mb));
    }
    const hit = globMatchSteps(`${"*a".repeat(49)}*b*`, `${mb}b`);
    expect(hit.matched).toBe(true);
    expect(hit.steps).toBeLessThanOrEqual(mb.length + 200);
  });
  // Its time against a plain pattern's on the same name: `npm run bench:glob` (a ratio, not asserted here).
});

describe("pattern bounds for admins", () => {
  it("refuses patterns over 256 characters or with more than 32 stars, in words", () => {
    expect(globProblem("orders.*")).toBeNull();
    expect(globProblem("x".repeat(GLOB_MAX_LENGTH))).toBeNull();
    expect(globProblem("*".repeat(GLOB_MAX_STARS))).toBeNull();
    expect(globProblem("x".repeat(GLOB_MAX_LENGTH + 1))).toBe(
      "this pattern is 257 characters long; a pattern has at most 256",
    );
    expect(globProblem("*a".repeat(50), "DLQ name pattern")).toBe(
      'DLQ name pattern has 50 "*"; a pattern has at most 32',
    );
  });

  it("checkGlob makes the bound a zod input error", () => {
    const schema = z.object({ queue: z.string().superRefine(checkGlob()) });
    expect(schema.safeParse({ queue: "orders.*" }).success).toBe(true);
    const r = schema.safeParse({ queue: "*a".repeat(40) });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      ["queue", 'this pattern has 40 "*"; a pattern has at most 32'],
    ]);
  });
});
