import { describe, expect, it } from "vitest";
import { compileSafeRegex, MAX_PATTERN_LENGTH, MAX_PROGRAM_SIZE, PatternError, patternProblem } from "./safe-regex";

const ci = (p: string) => compileSafeRegex(p, { caseInsensitive: true });

describe("compileSafeRegex: hostile patterns answer on huge text", () => {
  const MB = 1 << 20;
  // Patterns that backtrack exponentially in a backtracking engine (1.2 s and 10 s for 30 characters,
  // in the security review), beside a plain one of the same shape. RE2 answers in linear time: these
  // finish (a backtracking engine would not, within any timeout). How long they take against their
  // plain twins is measured by `npm run bench:safe-regex` (bench/safe-regex.ts), not asserted here.
  const cases: Array<[string, string, string]> = [
    ["(?:.|.){25}#", ".{25}#", `#${"a".repeat(MB)}`],
    ["(?:a{1,2}){26}b", "a{26}b", `b${"a".repeat(MB)}`],
    ["(?:.|.){40}#", ".{40}#", `#${"a".repeat(MB)}`],
    ["(?:a{1,2}){40}b", "a{40}b", `b${"a".repeat(MB)}`],
    ["(a+)+$", "a+$", `${"a".repeat(MB)}!`],
    ["(?:a|aa)+c", "a+c", `c${"a".repeat(MB)}`],
    ["a.*a.*a.*a.*b", "a.*b", `b${"a".repeat(MB)}`],
  ];

  it.each(cases)("%s on 1 MB that it does not match answers no, as the plain %s does", (hostile, plain, input) => {
    expect(ci(hostile).test(input)).toBe(false);
    expect(ci(plain).test(input)).toBe(false);
    // The same text with the missing piece where the pattern needs it: both answer yes.
    const fixed = hostile.endsWith("$") ? "a".repeat(MB) : `${"a".repeat(MB)}${input[0]}`;
    expect(ci(hostile).test(fixed)).toBe(true);
    expect(ci(plain).test(fixed)).toBe(true);
  });

  it("the security review's 30-character messages: no match, and a match once the pattern's end is there", () => {
    const message = "a".repeat(30);
    for (const [pattern, end] of [
      ["(?:.|.){25}#", "#"],
      ["(?:a{1,2}){26}b", "b"],
    ]) {
      const re = ci(pattern);
      for (let i = 0; i < 1000; i++) expect(re.test(`${message}${i}`), pattern).toBe(false);
      expect(re.test(`${message}${end}`), pattern).toBe(true);
    }
  });

  it("matches what the hostile patterns describe", () => {
    expect(ci("(?:.|.){25}#").test(`${"x".repeat(25)}#`)).toBe(true);
    expect(ci("(?:.|.){25}#").test(`${"x".repeat(24)}#`)).toBe(false);
    expect(ci("(?:a{1,2}){26}b").test(`${"A".repeat(52)}B`)).toBe(true);
    expect(ci("(?:a{1,2}){26}b").test(`${"a".repeat(25)}b`)).toBe(false);
    expect(ci("(a+)+$").test("aaa")).toBe(true);
  });
});

describe("compileSafeRegex: what RE2 lacks is refused in the admin's words", () => {
  it.each([
    ["a lookahead", "timeout(?=.*retry)", /lookahead "\(\?=.*no\s+lookaround; match the text itself/],
    ["a negative lookahead", "(?!debug)timeout", /lookahead "\(\?!/],
    ["a lookbehind", "(?<=status )503", /lookbehind "\(\?<=…".*use \\b for a word boundary/],
    ["a negative lookbehind", "(?<![a-z])EPIPE", /lookbehind "\(\?<!…"/],
    ["a backreference", "(a)\\1", /backreference "\\1".*cannot require the same text twice/],
    ["a named backreference", "(?<q>['\"]).*\\k<q>", /backreference "\\k"/],
    ["a possessive quantifier", "a++b", /repeats a repetition \("\+\+"\).*possessive/],
    ["an atomic group", "(?>a+)b", /atomic group.*write "\(\?:…\)"/],
    ["a JavaScript \\u escape", "caf\\u00e9", /escape "\\u".*\\x\{00e9\}/],
    ["an unknown escape", "end\\Z", /escape "\\Z", which is not supported/],
    ["a repeat over 1000", "a{1001}", /more than 1000 times in all \("\{1001\}"/],
    ["nested repeats over 1000", "(?:[a-z]{1,100}){100}", /more than 1000 times in all \("\{100\}", counting/],
    ["a pattern too large once counted out", "(?:a{1,2}){400}b", /too large once its repeats are counted out/],
    ["an unclosed group", "(unclosed", /not a valid regular expression \(missing closing \): \(unclosed\)/],
    ["an unmatched parenthesis", "a)", /not a valid regular expression \(unexpected \)/],
    ["an unclosed class", "[abc", /not a valid regular expression \(missing closing \]/],
    ["a too long pattern", "a".repeat(MAX_PATTERN_LENGTH + 1), /longer than 500 characters/],
  ])("%s: %s", (_, pattern, message) => {
    expect(() => ci(pattern)).toThrow(PatternError);
    expect(() => ci(pattern)).toThrow(message);
    expect(patternProblem(pattern, { caseInsensitive: true })).toMatch(/^pattern /);
  });

  it("bounds the compiled size, not only the text", () => {
    const big = "(?:a{1,2}){400}b";
    expect(big.length).toBeLessThan(MAX_PATTERN_LENGTH);
    expect(patternProblem(big)).toMatch(new RegExp(`\\(\\d+ steps, at most ${MAX_PROGRAM_SIZE}\\)`));
    expect(compileSafeRegex(big, { maxProgramSize: 2000 }).size).toBeGreaterThan(MAX_PROGRAM_SIZE);
  });

  it("accepts RE2's own syntax and common JavaScript forms that mean the same", () => {
    for (const p of ["(?P<n>a)", "(?<n>a)", "\\x{e9}", "\\x41", "[[:alpha:]]+", "\\pL", "a\\/b", "\\bEPIPE\\b", "a*?"])
      expect(patternProblem(p), p).toBeNull();
  });
});
