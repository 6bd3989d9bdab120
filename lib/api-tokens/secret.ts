import "server-only";
import { createHmac, timingSafeEqual } from "node:crypto";
import { derivedKey } from "@/lib/crypto/derived-keys";

/**
 * What the database keeps of a token: HMAC-SHA256 of the whole token under a key derived from the
 * server secret (lib/crypto/derived-keys.ts). A copy of the table (a backup, a replica, a read-only
 * SQL role) cannot be used to test guesses offline without that key, and the tokens' 256 random
 * bits make guessing hopeless anyway. Rotating the index key without DLQ_MASKING_KEY set changes
 * the derived key: every token then stops working (fails closed) and users create new ones.
 */
export function tokenHash(token: string): string {
  return createHmac("sha256", derivedKey("api token v1")).update(token, "utf8").digest("hex");
}

/** Constant-time equality of two hex digests (false for different lengths). */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
