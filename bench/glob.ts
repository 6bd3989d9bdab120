/**
 * Glob matching (lib/glob.ts) on hostile patterns against plain ones. No services.
 *   npm run bench:glob      (BENCH_GLOB_MB to change the largest name, default 1; smoke 1/64)
 *
 * 1. Per name size (1 KB to BENCH_GLOB_MB MB of `a`s): a plain pattern (`*password*`) and hostile
 *    ones (`*a*a*a*a*a*a*b*`, 50 stars, a 201-character segment), best of 5, as µs and as a ratio
 *    to the plain pattern on the same name. Goal: every ratio below 10 at every size, and time
 *    growing with the name's length (×2 per doubling), not faster.
 * 2. The backtracking RegExp this matcher replaced, on `*a*a*a*a*a*a*b` against 16 to 40 `a`s,
 *    against the matcher on the same names: how the old cost grew (about n^6), for the record.
 */
import { globMatch } from "../lib/glob";
import { bestUs, report, SMOKE, size } from "./report";

const MAX_MB = size("BENCH_GLOB_MB", 1, 1 / 64);

function oldGlobRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "is");
}

const PLAIN = "*password*";
/** Each ends in `*`, or an anchored tail would refuse the name at its last character: every one reads the whole name. */
const HOSTILE: Record<string, string> = {
  "6 stars": "*a*a*a*a*a*a*b*",
  "50 stars": `${"*a".repeat(49)}*b*`,
  "50 stars, ?": `${"*a?".repeat(49)}*b?*`,
  "201-char segment": `*${"a".repeat(200)}b*`,
};
const ISSUE = "*a*a*a*a*a*a*b";

console.log(`1. Hostile patterns against ${PLAIN} on the same name (µs, best of 5; ratio to plain)`);
const sizes: number[] = [];
for (let n = 1024; n <= MAX_MB * (1 << 20); n *= 4) sizes.push(n);
let previous: Record<string, number> | null = null;
for (const n of sizes) {
  const name = "a".repeat(n);
  const plain = bestUs(() => globMatch(PLAIN, name));
  const row: Record<string, number> = { plain };
  const cells = [`${(n / 1024).toFixed(0).padStart(5)} KB`, `plain ${plain.toFixed(0).padStart(6)}`];
  for (const [label, glob] of Object.entries(HOSTILE)) {
    if (globMatch(glob, name)) throw new Error(`${glob} should not match`);
    const us = bestUs(() => globMatch(glob, name));
    row[label] = us;
    if (n * 4 > MAX_MB * (1 << 20))
      report({
        operation: `${label} on ${(n / 1024).toFixed(0)} KB`,
        rate: { value: us, unit: "µs" },
        anchor: { name: PLAIN, value: plain, unit: "µs" },
      });
    const growth = previous ? ` ×${(us / previous[label]).toFixed(1)}` : "";
    cells.push(`${label} ${us.toFixed(0).padStart(6)} (${(us / plain).toFixed(1)}${growth})`);
  }
  previous = row;
  console.log(`  ${cells.join("  ")}`);
}
console.log("  (×k: this size against the previous one, 4× longer: linear is ×4)");

console.log("\n2. The old backtracking RegExp against the matcher, *a*a*a*a*a*a*b on n `a`s (µs)");
const re = oldGlobRegExp(ISSUE);
re.test("a".repeat(20)); // compiled and warm
const lengths = SMOKE ? [16, 20] : [16, 24, 32, 40, 48];
for (const n of lengths) {
  const name = "a".repeat(n);
  const old = bestUs(() => re.test(name), 1);
  const now = bestUs(() => globMatch(ISSUE, name));
  if (n === lengths.at(-1))
    report({
      operation: `${ISSUE} on ${n} a's`,
      rate: { value: now, unit: "µs" },
      anchor: { name: "old RegExp", value: old, unit: "µs" },
    });
  console.log(`  n=${String(n).padStart(2)}  old ${old.toFixed(0).padStart(9)}  new ${now.toFixed(1).padStart(5)}`);
}
