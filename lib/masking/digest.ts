import "server-only";
import { createHmac } from "node:crypto";
import { derivedKey } from "@/lib/crypto/derived-keys";
import type { Role } from "@/lib/auth/permissions";
import { rulesFor } from "./engine";
import type { MaskingPolicy } from "./policy";
import { loadMaskingConfig } from "./store";

/**
 * Digests a role may see. The SHA-256 of a payload is a perfect oracle for a
 * masked field: hash the visible JSON with a guessed password and compare. A role that sees the
 * payload masked gets an HMAC of that SHA-256 under a server key instead: equal payloads still
 * compare equal (and can be searched for), but a guess cannot be checked without the key. Roles
 * that see the bytes themselves get the real SHA-256. The key: lib/crypto/derived-keys.ts.
 */

export const KEYED_DIGEST_PREFIX = "hmac:";

const digestKey = () => derivedKey("visible digest v1");

/** True when this policy shows the payload's bytes as they are, so the real SHA-256 tells nothing new. */
export function seesRawBytes(policy: Pick<MaskingPolicy, "rules" | "payload">): boolean {
  return policy.rules.length === 0 && policy.payload !== "none";
}

function keyed(value: string): string {
  return createHmac("sha256", digestKey()).update(value, "utf8").digest("hex");
}

/** The payload digest as this policy's role may see it: the SHA-256, or `hmac:` + the keyed digest. */
export function visibleSha256(sha256: string, policy: Pick<MaskingPolicy, "rules" | "payload">): string {
  return seesRawBytes(policy) ? sha256 : `${KEYED_DIGEST_PREFIX}${keyed(sha256)}`;
}

/** Fingerprints hash the payload's SHA-256 too (group key + SHA-256): keyed alike, same length. */
export function visibleFingerprint(fingerprint: string, policy: Pick<MaskingPolicy, "rules" | "payload">): string {
  return seesRawBytes(policy) ? fingerprint : keyed(`fingerprint\n${fingerprint}`).slice(0, fingerprint.length || 32);
}

/**
 * The keyed digest as SQL over the `sha256` column, for an exact-match search by what the role
 * sees: HMAC-SHA256 spelled out with Postgres's sha256() (core since 11, so PGlite too), the padded
 * key halves sent as parameters. Returns the expression and its two bytea parameters.
 */
export function keyedDigestSql(column: string, ipadParam: string, opadParam: string): string {
  return `encode(sha256(${opadParam}::bytea || sha256(${ipadParam}::bytea || convert_to(${column}, 'UTF8'))), 'hex')`;
}

export function keyedDigestPads(): { ipad: Buffer; opad: Buffer } {
  const block = Buffer.alloc(64);
  digestKey().copy(block);
  const ipad = Buffer.alloc(64);
  const opad = Buffer.alloc(64);
  for (let i = 0; i < 64; i++) {
    ipad[i] = block[i] ^ 0x36;
    opad[i] = block[i] ^ 0x5c;
  }
  return { ipad, opad };
}

/**
 * Names the digest key without revealing it, so digests stored under one key are never taken for
 * another's (lib/triage/letter-search.ts): a key rotation changes it.
 */
export function keyedDigestFingerprint(): string {
  return createHmac("sha256", digestKey()).update("key fingerprint", "utf8").digest("hex").slice(0, 32);
}

/** A `q` that is a keyed digest: its hex part, else null. */
export function keyedDigestQuery(q: string): string | null {
  const t = q.trim().toLowerCase();
  if (!t.startsWith(KEYED_DIGEST_PREFIX)) return null;
  const hex = t.slice(KEYED_DIGEST_PREFIX.length);
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null;
}

/**
 * For views across DLQs (the archive, the audit log): the digest a role is shown, decided once for
 * every DLQ. The real SHA-256 only where no masking rule applies to the role and no DLQ is
 * sensitive, so it sees every payload's bytes; else the keyed digest.
 */
export async function crossDlqDigest(role: Role): Promise<{ raw: boolean; show: (sha256: string) => string }> {
  const config = await loadMaskingConfig();
  const raw = rulesFor(config.rules, role).length === 0 && config.sensitive.length === 0;
  return { raw, show: (sha256) => (raw ? sha256 : `${KEYED_DIGEST_PREFIX}${keyed(sha256)}`) };
}
