import { formatLetterCount } from "@/lib/format";

/**
 * The filtered set's size above the letters: counted up to a cap (lib/triage/queries.ts
 * COUNT_CAP), so a larger set reads "at least 10,000 letters", never a made-up total.
 */
export function MatchCount({ count, atLeast, filtered }: { count: number; atLeast: boolean; filtered: boolean }) {
  return (
    <strong
      className="match-count"
      data-testid="match-count"
      data-count={count}
      data-count-at-least={atLeast ? "true" : undefined}
      title={atLeast ? "Counted up to this many; the set holds more." : undefined}
    >
      {formatLetterCount(count, atLeast)} {filtered ? "match" : "in the index"}
    </strong>
  );
}
