/** Dead-letter topic discovery by glob patterns. Pure. */
import { compileGlob, type Glob } from "@/lib/glob";

/** `*` matches any run of characters (dots included), `?` one character; case-sensitive like topic names. */
export function topicGlob(glob: string): Glob {
  return compileGlob(glob, { caseSensitive: true });
}

/** Topics matching any pattern, without Kafka's internal topics (`__consumer_offsets`, ...), sorted. */
export function matchDeadLetterTopics(topics: string[], patterns: string[]): string[] {
  const res = patterns.map(topicGlob);
  return topics.filter((t) => !t.startsWith("__") && res.some((r) => r.test(t))).sort();
}

/** Letter ids are `<partition>-<offset>`: URL-safe and exact for 64-bit offsets. */
export function parseLetterId(id: string): { partition: number; offset: bigint } | null {
  const m = /^(\d{1,9})-(\d{1,19})$/.exec(id);
  if (!m) return null;
  const offset = BigInt(m[2]);
  if (offset > 9223372036854775807n) return null;
  return { partition: Number(m[1]), offset };
}

export const letterIdOf = (partition: number, offset: bigint | string) => `${partition}-${offset.toString()}`;
