/**
 * Admin-written patterns run in linear time (lib/safe-regex.ts, RE2 semantics through re2js): the
 * patterns that backtrack exponentially in JavaScript's own engine against plain patterns of the
 * same shape, on the same text, in the same run. No services.
 *   npm run bench:safe-regex      (BENCH_SAFE_REGEX_KB to change the long text, default 1,024 KB; smoke 64)
 *
 * Rows and their goals (ratios; a backtracking engine takes seconds to years on the hostile ones:
 * 1.2 s and 10 s for a 30-character message in the security review):
 *   - each hostile pattern on the long text: at most 20x its plain twin (a floor of 2 ms for the
 *     plain one, which a literal prefilter can make nearly free);
 *   - growth: the long text against a quarter of it, at most 4x what linear growth predicts;
 *   - the review's 30-character messages, 1,000 of them: at most 50x a plain pattern.
 * These were assertions of lib/safe-regex.test.ts until 2026-12-06: timing goals belong here, where
 * a loaded machine cannot turn them red (the unit test keeps what the patterns answer).
 */
import { compileSafeRegex } from "../lib/safe-regex";
import { bestUs, report, size } from "./report";

const KB = size("BENCH_SAFE_REGEX_KB", 1024, 64);
const LONG = KB * 1024;
const ci = (p: string) => compileSafeRegex(p, { caseInsensitive: true });
const ms = (f: () => void) => bestUs(f) / 1000;

/** Hostile pattern, its plain twin, the text (the first characters defeat any literal prefilter). */
const CASES: Array<[string, string, (n: number) => string]> = [
  ["(?:.|.){25}#", ".{25}#", (n) => `#${"a".repeat(n)}`],
  ["(?:a{1,2}){26}b", "a{26}b", (n) => `b${"a".repeat(n)}`],
  ["(?:.|.){40}#", ".{40}#", (n) => `#${"a".repeat(n)}`],
  ["(?:a{1,2}){40}b", "a{40}b", (n) => `b${"a".repeat(n)}`],
  ["(a+)+$", "a+$", (n) => `${"a".repeat(n)}!`],
  ["(?:a|aa)+c", "a+c", (n) => `c${"a".repeat(n)}`],
  ["a.*a.*a.*a.*b", "a.*b", (n) => `b${"a".repeat(n)}`],
];

console.log(`Admin-written patterns on ${KB} KB of text: hostile against plain (ms, best of 5)`);
for (const [hostile, plain, textOf] of CASES) {
  const text = textOf(LONG);
  const h = ci(hostile);
  const p = ci(plain);
  if (h.test(text) || p.test(text)) throw new Error(`${hostile} / ${plain}: expected no match on the long text`);
  const hostileMs = ms(() => h.test(text));
  const plainMs = ms(() => p.test(text));
  const ratio = hostileMs / Math.max(plainMs, 2);
  report({
    operation: `${hostile} on ${KB} KB (goal <= 20x; anchor at least 2 ms)`,
    rate: { value: hostileMs, unit: "ms" },
    anchor: { name: `plain ${plain}`, value: Math.max(plainMs, 2), unit: "ms" },
  });
  console.log(
    `  ${hostile.padEnd(18)} ${hostileMs.toFixed(2)} ms against ${plain} ${plainMs.toFixed(2)} ms: ${ratio.toFixed(1)}x`,
  );
}

for (const pattern of ["(?:.|.){40}#", "(?:a{1,2}){40}b", "(a+)+$"]) {
  const re = ci(pattern);
  const quarter = ms(() => re.test(`#b${"a".repeat(LONG / 4)}!`));
  const whole = ms(() => re.test(`#b${"a".repeat(LONG)}!`));
  // Against 4x the quarter's time: 1.0 is linear growth exactly.
  const ratio = whole / (4 * Math.max(quarter, 0.5));
  report({
    operation: `${pattern}: ${KB} KB against 4x its time on ${KB / 4} KB (goal <= 4, linear = 1; anchor at least 2 ms)`,
    rate: { value: whole, unit: "ms" },
    anchor: { name: `${KB / 4} KB x 4`, value: 4 * Math.max(quarter, 0.5), unit: "ms" },
  });
  console.log(
    `  growth ${pattern.padEnd(18)} ${whole.toFixed(2)} ms against 4 x ${quarter.toFixed(2)} ms: ${ratio.toFixed(2)}`,
  );
}

const message = "a".repeat(30);
const plain = ci("connection refused");
const baseline = ms(() => {
  for (let i = 0; i < 1000; i++) plain.test(`${message}${i}`);
});
for (const pattern of ["(?:.|.){25}#", "(?:a{1,2}){26}b"]) {
  const re = ci(pattern);
  const hostileMs = ms(() => {
    for (let i = 0; i < 1000; i++) re.test(`${message}${i}#b`);
  });
  const ratio = hostileMs / Math.max(baseline, 1);
  report({
    operation: `${pattern} on 1,000 messages of 30 characters (goal <= 50x; anchor at least 1 ms)`,
    rate: { value: hostileMs, unit: "ms" },
    anchor: { name: "plain pattern", value: Math.max(baseline, 1), unit: "ms" },
  });
  console.log(
    `  30 characters ${pattern.padEnd(18)} ${hostileMs.toFixed(2)} ms against ${baseline.toFixed(2)} ms: ${ratio.toFixed(1)}x`,
  );
}
