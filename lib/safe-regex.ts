import { RE2JS } from "re2js";

/**
 * Regular expressions written by admins (triage rules), compiled for RE2 (re2js, pure JavaScript):
 * matching takes time linear in the text times the compiled pattern's size and never backtracks,
 * so no pattern can stall a request or a scan. RE2 has no lookaround and no backreferences; a
 * pattern that uses them is refused with a message an admin can act on. Pure: runs in the browser
 * too (the rules editor checks each pattern as it is typed). Decision: docs/decisions/0002-re2js.md.
 */

export const MAX_PATTERN_LENGTH = 500;
/**
 * RE2's measure of a compiled pattern (`programSize`: about one per character or class, repeats
 * counted out). Worst-case matching time per character of text grows with it; the largest default
 * triage rule is 315.
 */
export const MAX_PROGRAM_SIZE = 1000;

export interface SafeRegex {
  readonly source: string;
  /** RE2's programSize: what a rule list's total is bounded by. */
  readonly size: number;
  /** Whether the pattern matches anywhere in `text` (unanchored, like RegExp.prototype.test). */
  test(text: string): boolean;
}

/** A pattern the engine refuses; `message` is for the admin who wrote it and starts with "pattern". */
export class PatternError extends Error {
  override name = "PatternError";
}

const ENGINE = "rule patterns run on RE2, which guarantees linear time and has no";

/** Compiles `source`, or throws a PatternError that says what to change. */
export function compileSafeRegex(
  source: string,
  opts: { caseInsensitive?: boolean; maxLength?: number; maxProgramSize?: number } = {},
): SafeRegex {
  const maxLength = opts.maxLength ?? MAX_PATTERN_LENGTH;
  const maxSize = opts.maxProgramSize ?? MAX_PROGRAM_SIZE;
  if (source.length > maxLength) throw new PatternError(`pattern is longer than ${maxLength} characters`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, opts.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (e) {
    throw new PatternError(explain(e, maxSize));
  }
  const size = re.programSize();
  if (size > maxSize) throw new PatternError(tooLarge(maxSize, size));
  return { source, size, test: (text) => re.test(text) };
}

/** The PatternError message for `source`, or null when it compiles. */
export function patternProblem(source: string, opts: Parameters<typeof compileSafeRegex>[1] = {}): string | null {
  try {
    compileSafeRegex(source, opts);
    return null;
  } catch (e) {
    if (e instanceof PatternError) return e.message;
    throw e;
  }
}

const tooLarge = (max: number, size?: number) =>
  `pattern is too large once its repeats are counted out (${size === undefined ? "" : `${size} steps, `}at most ${max}); use smaller repeat counts such as {0,50}, or + and *`;

/** RE2's syntax errors (re2js: `error` is the kind, `input` the offending text) in the admin's words. */
function explain(e: unknown, maxSize: number): string {
  const kind = (e as { error?: unknown })?.error;
  if (typeof kind !== "string") return "pattern is not a valid regular expression";
  // The case-insensitive flag is passed as a "(?i)" prefix; the admin did not write it.
  const at = String((e as { input?: unknown }).input ?? "").replace(/^\(\?i\)/, "");
  switch (kind) {
    case "invalid or unsupported Perl syntax":
      if (at.startsWith("(?=") || at.startsWith("(?!"))
        return `pattern uses a lookahead "${at}…", which is not supported: ${ENGINE} lookaround; match the text itself instead`;
      if (at.startsWith("(?>"))
        return 'pattern uses an atomic group "(?>…)", which is not supported; write "(?:…)" (RE2 never backtracks, so nothing is lost)';
      break;
    case "invalid named capture":
      if (at.startsWith("(?<=") || at.startsWith("(?<!"))
        return `pattern uses a lookbehind "${at.slice(0, 4)}…", which is not supported: ${ENGINE} lookaround; use \\b for a word boundary, or match the text before it too`;
      break;
    case "invalid escape sequence":
      if (/^\\(?:[1-9]|k)/.test(at))
        return `pattern uses a backreference "${at}", which is not supported: ${ENGINE} backreferences, so a pattern cannot require the same text twice; write the text out`;
      if (at.startsWith("\\u"))
        return `pattern uses the escape "${at}", which is not supported; write a character by its code as \\x{00e9}`;
      return `pattern uses the escape "${at}", which is not supported; escape only punctuation, and use \\d, \\w, \\s, \\b or \\x{…}`;
    case "invalid nested repetition operator":
      return `pattern repeats a repetition ("${at}"), which is not supported (possessive quantifiers such as "a++" included); use one quantifier, such as "a+"`;
    case "invalid repeat count":
      return `pattern repeats something more than 1000 times in all ("${at}", counting the repeats around it); use smaller counts, or + and *`;
    case "expression too large":
      return tooLarge(maxSize);
    case "expression nests too deeply":
      return "pattern nests groups too deeply; flatten it";
  }
  return `pattern is not a valid regular expression (${kind}${at ? `: ${at}` : ""})`;
}
