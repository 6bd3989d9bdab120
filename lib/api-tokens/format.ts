import "server-only";
import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

/**
 * Personal API token format: `dlqc_` + 43 base62 characters (32 random bytes, 256 bits) + 6 base62
 * characters of CRC-32 over those 43, 54 characters in all. Matched by `\bdlqc_[0-9A-Za-z]{49}\b`
 * (no example here: a well-formed one in the source would trip the scanners it is made for).
 *
 * - The `dlqc_` prefix names the console in a leaked secret, so secret scanners (GitHub push
 *   protection, gitleaks, trufflehog) can be given one exact rule.
 * - Base62 has no `-` or `_` in the random part: a double click selects the whole token, and a
 *   scanner's word boundaries do not cut it.
 * - The checksum lets a scanner (and the console, before touching the database) tell a real token
 *   from a random string of the same shape; it adds no secrecy.
 * - The first 13 characters (`dlqc_` + 8) are the token's display prefix, shown in lists and kept
 *   in the database to find the row; the other ~208 random bits stay secret.
 */
export const TOKEN_PREFIX = "dlqc_";
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_BYTES = 32;
/** ceil(256 / log2(62)) */
const BODY_LENGTH = 43;
/** ceil(32 / log2(62)) */
const CHECK_LENGTH = 6;
export const TOKEN_LENGTH = TOKEN_PREFIX.length + BODY_LENGTH + CHECK_LENGTH;
export const DISPLAY_PREFIX_LENGTH = TOKEN_PREFIX.length + 8;
/** For secret scanners and docs. */
export const TOKEN_PATTERN = /\bdlqc_[0-9A-Za-z]{49}\b/;
const EXACT = /^dlqc_[0-9A-Za-z]{49}$/;

/** Fixed-width base62 of a non-negative integer, most significant digit first. */
export function base62(value: bigint, width: number): string {
  if (value < BigInt(0)) throw new RangeError("base62 of a negative number");
  let n = value;
  let out = "";
  const base = BigInt(62);
  while (n > BigInt(0)) {
    out = ALPHABET[Number(n % base)] + out;
    n /= base;
  }
  if (out.length > width) throw new RangeError(`${value} does not fit ${width} base62 digits`);
  return out.padStart(width, "0");
}

function checksum(body: string): string {
  return base62(BigInt(crc32(body)), CHECK_LENGTH);
}

/** A new token from 32 random bytes (`random` only for tests). */
export function mintToken(random: Buffer = randomBytes(RANDOM_BYTES)): string {
  if (random.length !== RANDOM_BYTES) throw new RangeError(`a token needs ${RANDOM_BYTES} random bytes`);
  const body = base62(BigInt(`0x${random.toString("hex")}`), BODY_LENGTH);
  return `${TOKEN_PREFIX}${body}${checksum(body)}`;
}

/** The token's shape and checksum are right (says nothing about whether it exists). */
export function isWellFormedToken(token: string): boolean {
  if (typeof token !== "string" || token.length !== TOKEN_LENGTH || !EXACT.test(token)) return false;
  const body = token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + BODY_LENGTH);
  return checksum(body) === token.slice(TOKEN_PREFIX.length + BODY_LENGTH);
}

/** What lists show and the database indexes: `dlqc_` and the next 8 characters. */
export function displayPrefix(token: string): string {
  return token.slice(0, DISPLAY_PREFIX_LENGTH);
}

/**
 * The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 9110), or
 * null when the header is missing or is not a bearer credential. The token is not checked here.
 */
export function bearerToken(header: string | null | undefined): string | null {
  if (typeof header !== "string" || header.length > 1024) return null;
  const m = /^\s*bearer[ \t]+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** The header carries a bearer that looks like a personal token (by its prefix; validity is checked by actorFromBearer). */
export function isPersonalToken(header: string | null | undefined): boolean {
  return bearerToken(header)?.startsWith(TOKEN_PREFIX) ?? false;
}
