import type { z } from "zod";

/**
 * The console's globs, written by admins (masking header and field names, sensitive DLQs, alert
 * scopes, owners, repair scopes, consumer groups, Kafka and Pulsar DLQ patterns): `*` matches any
 * run of characters (none included, line breaks included), `?` exactly one UTF-16 code unit, and
 * every other character only itself (no escapes, no classes). A glob matches the whole name.
 * Matching is case-insensitive unless asked otherwise, folding each code unit as a RegExp with the
 * `i` flag and without `u` does (`ß` is not `SS`, `ſ` is not `s`).
 *
 * Matching never backtracks, so a pattern cannot stall a request whatever the name: the pattern is
 * cut at its stars into segments; the first must match at the start, the last at the end, and each
 * middle one is taken at its leftmost place after the previous one. Leftmost is never worse than
 * any other place (whatever fits after a later place fits after an earlier one), so this finds a
 * match whenever there is one. The leftmost place is found by a bit-parallel scan (shift-and, which
 * treats `?` like any letter): every character of the name is read at most once over all segments,
 * at a cost of one machine word per 32 characters of the segment. So a match costs
 * O(name length × ⌈segment length / 32⌉) plus the pattern's length, whatever the number of stars;
 * with GLOB_MAX_LENGTH that is at most 8 words per character of the name.
 */

/**
 * Longest pattern an admin may write. Patterns name queues, topics, headers and groups (Kafka
 * topic names have at most 249 characters, SQS queue names 80), so 256 leaves room for any real
 * one while keeping the matcher's per-character cost at most 8 words and its cache small.
 */
export const GLOB_MAX_LENGTH = 256;
/**
 * Most `*` in one pattern. The matcher's time does not depend on it; the bound is there because
 * no real name pattern needs more than a handful, and a pattern made of dozens of stars is an
 * attack or a mistake an admin should hear about when writing it.
 */
export const GLOB_MAX_STARS = 32;

/** Why the console refuses this pattern, in the operator's words (`what` names it), or null. */
export function globProblem(glob: string, what = "this pattern"): string | null {
  if (glob.length > GLOB_MAX_LENGTH)
    return `${what} is ${glob.length} characters long; a pattern has at most ${GLOB_MAX_LENGTH}`;
  let stars = 0;
  for (let i = 0; i < glob.length; i++) if (glob.charCodeAt(i) === STAR) stars++;
  if (stars > GLOB_MAX_STARS) return `${what} has ${stars} "*"; a pattern has at most ${GLOB_MAX_STARS}`;
  return null;
}

/** For zod schemas where admins write patterns: `z.string().superRefine(checkGlob("DLQ name pattern"))`. */
export function checkGlob(what?: string) {
  return (value: string, ctx: z.RefinementCtx<string>): void => {
    const problem = globProblem(value, what);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  };
}

export interface GlobOptions {
  /** Compare code units exactly (topic names of Kafka and Pulsar). Default: case-insensitive. */
  caseSensitive?: boolean;
}

/** A compiled glob; `test` has RegExp's signature so it can stand where a RegExp was. */
export interface Glob {
  test(value: string): boolean;
}

const STAR = 42; // "*"
const ANY = -1; // "?" in a segment

/** One run of the pattern between stars: each code unit folded, or ANY; plus its shift-and tables. */
interface Segment {
  chars: Int32Array;
  /** Machine words per scan step: ⌈length / 32⌉. */
  words: number;
  /** Bit k set where the segment's k-th character is `?`, per word. */
  wild: Int32Array;
  /** Per character code (folded): bit k set where the k-th character is that one or `?`, per word. */
  masks: Map<number, Int32Array>;
  /** The masks of the 128 ASCII codes as they are read (folded already when folding): `words` per code. */
  ascii: Int32Array;
}

interface Compiled {
  fold: boolean;
  /** Without a star: the one segment, matched at the start and as long as the name. */
  star: boolean;
  head: Segment;
  middle: Segment[];
  tail: Segment;
  minLength: number;
}

/**
 * RegExp's non-unicode case folding of one code unit (ECMA-262 Canonicalize): its upper case when
 * that is one code unit, except that nothing beyond ASCII folds into ASCII (`ſ` is not `s`).
 */
let folded: Int32Array | null = null;
function fold(c: number): number {
  folded ??= new Int32Array(65536).fill(-1);
  let f = folded[c];
  if (f < 0) {
    const u = String.fromCharCode(c).toUpperCase();
    f = u.length !== 1 ? c : c >= 128 && u.charCodeAt(0) < 128 ? c : u.charCodeAt(0);
    folded[c] = f;
  }
  return f;
}

function segment(text: string, foldCase: boolean): Segment {
  const n = text.length;
  const chars = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    const c = text.charCodeAt(k);
    chars[k] = c === 63 /* ? */ ? ANY : foldCase ? fold(c) : c;
  }
  const words = Math.max(1, (n + 31) >> 5);
  const wild = new Int32Array(words);
  const masks = new Map<number, Int32Array>();
  for (let k = 0; k < n; k++) if (chars[k] === ANY) wild[k >> 5] |= 1 << (k & 31);
  for (let k = 0; k < n; k++) {
    if (chars[k] === ANY) continue;
    const m = masks.get(chars[k]) ?? wild.slice();
    masks.set(chars[k], m);
    m[k >> 5] |= 1 << (k & 31);
  }
  const ascii = new Int32Array(128 * words);
  for (let c = 0; c < 128; c++) ascii.set(masks.get(foldCase ? fold(c) : c) ?? wild, c * words);
  return { chars, words, wild, masks, ascii };
}

function compile(glob: string, foldCase: boolean): Compiled {
  const parts = glob.split("*");
  const head = segment(parts[0], foldCase);
  if (parts.length === 1) return { fold: foldCase, star: false, head, middle: [], tail: head, minLength: glob.length };
  const tail = segment(parts[parts.length - 1], foldCase);
  // Consecutive stars leave empty middle parts: they match anywhere, so they are dropped.
  const middle = parts
    .slice(1, -1)
    .filter((p) => p.length > 0)
    .map((p) => segment(p, foldCase));
  const minLength = glob.length - (parts.length - 1);
  return { fold: foldCase, star: true, head, middle, tail, minLength };
}

/** Steps taken by matching in this process: characters compared, times words per scanned character. */
let steps = 0;

/** Whether `seg` matches `value` at `at` (the caller checked that it fits). */
function matchesAt(seg: Segment, value: string, at: number, foldCase: boolean): boolean {
  const chars = seg.chars;
  steps += chars.length;
  for (let k = 0; k < chars.length; k++) {
    const p = chars[k];
    if (p === ANY) continue;
    const c = value.charCodeAt(at + k);
    if ((foldCase ? fold(c) : c) !== p) return false;
  }
  return true;
}

/** Leftmost start s ≥ from with the segment inside [from, to), or -1: one shift-and pass over the range. */
function leftmost(seg: Segment, value: string, from: number, to: number, foldCase: boolean): number {
  const n = seg.chars.length;
  const ascii = seg.ascii;
  if (seg.words === 1) {
    const wild = seg.wild[0];
    const last = 1 << (n - 1);
    let d = 0;
    for (let i = from; i < to; i++) {
      const c = value.charCodeAt(i);
      const m = c < 128 ? ascii[c] : (seg.masks.get(foldCase ? fold(c) : c)?.[0] ?? wild);
      d = ((d << 1) | 1) & m;
      if (d & last) {
        steps += i - from + 1;
        return i - n + 1;
      }
    }
    steps += to - from;
    return -1;
  }
  const words = seg.words;
  const d = new Int32Array(words);
  const top = words - 1;
  const last = 1 << ((n - 1) & 31);
  for (let i = from; i < to; i++) {
    const c = value.charCodeAt(i);
    let carry = 1;
    if (c < 128) {
      const base = c * words;
      for (let w = 0; w < words; w++) {
        const x = d[w];
        d[w] = ((x << 1) | carry) & ascii[base + w];
        carry = x >>> 31;
      }
    } else {
      const m = seg.masks.get(foldCase ? fold(c) : c) ?? seg.wild;
      for (let w = 0; w < words; w++) {
        const x = d[w];
        d[w] = ((x << 1) | carry) & m[w];
        carry = x >>> 31;
      }
    }
    if (d[top] & last) {
      steps += (i - from + 1) * words;
      return i - n + 1;
    }
  }
  steps += (to - from) * words;
  return -1;
}

function run(c: Compiled, value: string): boolean {
  const n = value.length;
  if (!c.star) return n === c.minLength && matchesAt(c.head, value, 0, c.fold);
  if (n < c.minLength) return false;
  const end = n - c.tail.chars.length;
  if (!matchesAt(c.head, value, 0, c.fold) || !matchesAt(c.tail, value, end, c.fold)) return false;
  let at = c.head.chars.length;
  for (const seg of c.middle) {
    const s = leftmost(seg, value, at, end, c.fold);
    if (s < 0) return false;
    at = s + seg.chars.length;
  }
  return true;
}

const caches = { folded: new Map<string, Compiled>(), exact: new Map<string, Compiled>() };

function compiled(glob: string, options?: GlobOptions): Compiled {
  const exact = options?.caseSensitive === true;
  const cache = exact ? caches.exact : caches.folded;
  let c = cache.get(glob);
  if (!c) {
    c = compile(glob, !exact);
    if (cache.size > 2000) cache.clear();
    cache.set(glob, c);
  }
  return c;
}

/** Whether `glob` matches the whole of `value`; case-insensitive unless `caseSensitive`. */
export function globMatch(glob: string, value: string, options?: GlobOptions): boolean {
  return run(compiled(glob, options), value);
}

/** A glob compiled once, for a list matched against many names. */
export function compileGlob(glob: string, options?: GlobOptions): Glob {
  const c = compiled(glob, options);
  return { test: (value: string) => run(c, value) };
}

/** For tests and benchmarks: the match and the steps it took (see `steps`). */
export function globMatchSteps(
  glob: string,
  value: string,
  options?: GlobOptions,
): { matched: boolean; steps: number } {
  const before = steps;
  const matched = globMatch(glob, value, options);
  return { matched, steps: steps - before };
}

/** For tests: the steps every match in this process has taken so far; the difference around a piece of work is its cost. */
export function globStepsTaken(): number {
  return steps;
}
