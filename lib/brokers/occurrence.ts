/**
 * Tells identical letters apart within one read, in read order: the first keeps its base id, the
 * second is `<base>~2`, the third `<base>~3`. At-least-once dead-lettering can put the same letter
 * in a DLQ twice; this keeps each copy addressable and its id stable across reads in the same order.
 *
 * A read must remember every base id it has seen, so this grows with the DLQ. It remembers them
 * compactly: a 64-bit hash of each base in an open-addressing table of two Uint32Arrays (8 bytes a
 * slot, 35-70% full: 12-23 bytes a letter, 16 MiB at 1,000,000 letters), and the base itself
 * only once it repeats. A Map of every base id held each id string (about 80-100 bytes a letter
 * with V8's per-entry overhead: 75-100 MB at 1,000,000 letters).
 *
 * The hash is fixed (no random seed), so two reads of the same letters in the same order name them
 * the same. Two different bases with the same 64-bit hash would make the second one `<base>~2`
 * (about 3 in 100 million reads of 1,000,000 distinct letters; n²/2^65): consistently, like a twin.
 */
const EMPTY_HI = 0;
const EMPTY_LO = 0;
const MAX_LOAD = 0.7;

export class OccurrenceCounter {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private mask: number;
  private size = 0;
  /** Bases seen more than once, with their count so far (rare: true duplicates). */
  private readonly repeated = new Map<string, number>();

  constructor(initialSlots = 1024) {
    const cap = 2 ** Math.ceil(Math.log2(Math.max(16, initialSlots)));
    this.hi = new Uint32Array(cap);
    this.lo = new Uint32Array(cap);
    this.mask = cap - 1;
  }

  next(base: string): string {
    const r = this.repeated.get(base);
    if (r !== undefined) {
      this.repeated.set(base, r + 1);
      return `${base}~${r + 1}`;
    }
    if (this.add(base)) return base;
    this.repeated.set(base, 2);
    return `${base}~2`;
  }

  /** Bytes held by the table (for tests and measurements; the repeated bases are few). */
  get tableBytes(): number {
    return this.hi.byteLength + this.lo.byteLength;
  }

  /** Bases remembered as strings (those seen more than once). */
  get repeatedCount(): number {
    return this.repeated.size;
  }

  /** Adds the base's hash; false when it was there already. */
  private add(base: string): boolean {
    let [h, l] = hash64(base);
    if (h === EMPTY_HI && l === EMPTY_LO) l = 1;
    if (!this.insert(h, l)) return false;
    if (++this.size > this.mask * MAX_LOAD) this.grow();
    return true;
  }

  private insert(h: number, l: number): boolean {
    const { hi, lo, mask } = this;
    for (let i = l & mask; ; i = (i + 1) & mask) {
      const sh = hi[i];
      const sl = lo[i];
      if (sh === EMPTY_HI && sl === EMPTY_LO) {
        hi[i] = h;
        lo[i] = l;
        return true;
      }
      if (sh === h && sl === l) return false;
    }
  }

  private grow() {
    const { hi, lo } = this;
    const cap = hi.length * 2;
    this.hi = new Uint32Array(cap);
    this.lo = new Uint32Array(cap);
    this.mask = cap - 1;
    for (let i = 0; i < hi.length; i++) if (hi[i] !== EMPTY_HI || lo[i] !== EMPTY_LO) this.insert(hi[i], lo[i]);
  }
}

/** Two 32-bit halves of a 64-bit hash of a string's UTF-16 code units (cyrb53's mixing, both halves kept). */
export function hash64(s: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}
