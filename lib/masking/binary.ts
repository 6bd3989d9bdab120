import type { MaskingRule } from "./types";
import { maskTextWithRules } from "./engine";

/**
 * Masking for bytes that are not text (protobuf, Avro, BSON, MessagePack...). A binary format keeps
 * its strings as runs of printable bytes: each run goes through the same rules as text (detectors,
 * `key=value`, header lines), and a run that masks is hidden whole; a run that is itself a name a
 * field rule covers (BSON and MessagePack keep key names) hides the run after it. What a rule cannot
 * recognise in bytes (compressed data, numbers in binary) is not guessed at: compressed payloads are
 * hidden, since a reader could inflate them from the hex.
 */

export type BinaryMask =
  | { kind: "masked"; bytes: Uint8Array; ranges: Array<[number, number]>; maskedCount: number }
  | { kind: "hidden"; reason: string };

const MAGIC: Array<[string, number[]]> = [
  ["gzip", [0x1f, 0x8b]],
  ["zstd", [0x28, 0xb5, 0x2f, 0xfd]],
  ["xz", [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  ["bzip2", [0x42, 0x5a, 0x68]],
  ["lz4", [0x04, 0x22, 0x4d, 0x18]],
  ["zip", [0x50, 0x4b, 0x03, 0x04]],
  ["snappy", [0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]],
];

/** The compression format the bytes start with (zlib by its header check), or null. */
export function compressionOf(bytes: Uint8Array): string | null {
  for (const [name, magic] of MAGIC) if (magic.every((b, i) => bytes[i] === b)) return name;
  if (bytes.length >= 2 && (bytes[0] & 0x0f) === 8 && ((bytes[0] << 8) | bytes[1]) % 31 === 0) return "zlib";
  return null;
}

/** Line breaks end a run: in binary formats 0x0a and 0x0d are as often lengths as they are text. */
const printable = (b: number) => (b >= 0x20 && b < 0x7f) || b === 0x09;
/** Shorter runs hold no value a detector or `key=value` recognises. */
const MIN_RUN = 4;
/** Field names as short as `pin` and `cvv` are keys. */
const MIN_KEY = 3;

export function maskBinary(
  bytes: Uint8Array,
  rules: MaskingRule[],
  hashKey: Uint8Array | string,
  opts: { contentEncoding?: string | null } = {},
): BinaryMask {
  const compressed = compressionOf(bytes) ?? (opts.contentEncoding?.trim() ? opts.contentEncoding.trim() : null);
  if (compressed)
    return {
      kind: "hidden",
      reason: `Masking rules apply to your role and this payload is compressed (${compressed}): its content cannot be checked, so it is hidden.`,
    };
  const out = Uint8Array.from(bytes);
  const ranges: Array<[number, number]> = [];
  let maskedCount = 0;
  let hideNext = 0;
  const isKey = (run: string) => {
    const name = /[A-Za-z0-9_.\-[\]]+$/.exec(run)?.[0];
    return !!name && maskTextWithRules(`${name}=x`, rules, hashKey).maskedCount > 0;
  };
  let i = 0;
  while (i < bytes.length) {
    if (!printable(bytes[i])) {
      i++;
      continue;
    }
    let j = i;
    while (j < bytes.length && printable(bytes[j])) j++;
    let hide = hideNext > 0;
    // After a key, its value: a run too short to be the value (a length byte that prints) hides the next one too.
    hideNext = hide && j - i < MIN_RUN ? hideNext - 1 : 0;
    if (!hide && j - i >= MIN_KEY) {
      const run = String.fromCharCode.apply(null, bytes.subarray(i, j) as unknown as number[]);
      if (j - i >= MIN_RUN && maskTextWithRules(run, rules, hashKey).maskedCount > 0) hide = true;
      else if (isKey(run)) hideNext = 2;
    }
    if (hide) {
      out.fill(0, i, j);
      ranges.push([i, j]);
      maskedCount++;
    }
    i = j;
  }
  return { kind: "masked", bytes: out, ranges, maskedCount };
}
