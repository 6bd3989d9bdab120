/**
 * Tells identical letters apart within one read, in read order: the first keeps its base id, the
 * second is `<base>~2`, the third `<base>~3`. At-least-once dead-lettering can put the same letter
 * in a DLQ twice; this keeps each copy addressable and its id stable across reads in the same order.
 */
export class OccurrenceCounter {
  private readonly seen = new Map<string, number>();

  next(base: string): string {
    const n = (this.seen.get(base) ?? 0) + 1;
    this.seen.set(base, n);
    return n === 1 ? base : `${base}~${n}`;
  }
}
