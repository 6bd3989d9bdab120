/**
 * Classification (lib/triage/classify.ts) with admin-written hostile rules against the default rules
 * alone, on the same letters. No services.
 *   npm run bench:classify      (BENCH_CLASSIFY_LETTERS to change the letters per run, default 2,000; smoke 200)
 *
 * Per message length (30, 1,000 and 100,000 characters; classify reads the first 1,000): 5 patterns
 * that backtrack exponentially in a backtracking engine, ahead of the default rules, against the
 * default rules alone, best of 5 runs over distinct letters (no cache helps; "#" and "b" up front, so
 * no literal prefilter skips the work). Goal: the hostile set at most 10x the defaults at every
 * length (it was about 3x on a quiet machine, 2026-12-06). This was a unit test's assertion until it
 * failed at load 12: a timing goal belongs here, not in a test.
 */
import { classify, type ClassificationRule, DEFAULT_CLASSIFICATION_RULES, validateRule } from "../lib/triage/classify";
import { bestUs, report, size } from "./report";

const LETTERS = size("BENCH_CLASSIFY_LETTERS", 2_000, 200);

const HOSTILE_PATTERNS = ["(?:.|.){25}#", "(?:a{1,2}){26}b", "(?:.|.){40}#", "(?:a{1,2}){40}b", "(a+)+$"];
const hostile: ClassificationRule[] = HOSTILE_PATTERNS.map((pattern, i) =>
  validateRule({ id: `hostile.${i}`, disposition: "permanent", pattern, field: "any", description: "" }),
);
const withHostile = [...hostile, ...DEFAULT_CLASSIFICATION_RULES];

/** µs per letter, the fastest of 5 runs over every letter. */
const perLetter = (f: () => void) => bestUs(f) / LETTERS;

console.log(
  `Classification of ${LETTERS} letters: 5 hostile rules + the defaults against the defaults alone (µs per letter, best of 5)`,
);
for (const length of [30, 1000, 100_000]) {
  const letters = Array.from({ length: LETTERS }, (_, i) => ({
    exceptionClass: `com.acme.E${i}`,
    exceptionMessage: `#b${"a".repeat(length)}-${i}`,
  }));
  // Past the 1,000 characters classify reads, the text ends in "a"s: "(a+)+$" matches.
  const expected = length < 900 ? null : "hostile.4";
  for (const l of letters)
    if (classify(l, withHostile).ruleId !== expected) throw new Error(`${length} characters: expected ${expected}`);
  const defaults = perLetter(() => {
    for (const l of letters) classify(l, DEFAULT_CLASSIFICATION_RULES);
  });
  const attacked = perLetter(() => {
    for (const l of letters) classify(l, withHostile);
  });
  report({
    operation: `hostile rules + defaults, ${length}-character messages`,
    rate: { value: attacked, unit: "µs" },
    anchor: { name: "default rules alone", value: defaults, unit: "µs" },
  });
  console.log(
    `  ${String(length).padStart(6)} characters: defaults ${defaults.toFixed(2)} µs, with hostile ${attacked.toFixed(2)} µs (${(attacked / defaults).toFixed(1)}x)`,
  );
}
