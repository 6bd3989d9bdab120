import "server-only";
import { hkdfSync } from "node:crypto";
import { processState } from "@/lib/process-state";
import { keyring } from "./payload-cipher";

/**
 * Keys for keyed digests, derived (HKDF-SHA256) from one server secret: DLQ_MASKING_KEY when set,
 * else the current index key. One label per purpose, so no digest can stand in for another. The
 * secret never leaves the server, so a digest of something a role sees masked cannot be checked
 * against a guess. Rotating the index key without DLQ_MASKING_KEY set changes every derived key.
 */
const cache = processState("derived-keys", () => new Map<string, Buffer>());

function secret(): Buffer {
  const env = process.env.DLQ_MASKING_KEY;
  if (env) return Buffer.from(env, "utf8");
  const ring = keyring();
  return ring.keys.get(ring.currentId)!;
}

export function derivedKey(purpose: string): Buffer {
  let key = cache.get(purpose);
  if (!key) {
    key = Buffer.from(hkdfSync("sha256", secret(), Buffer.alloc(0), `dlq-console ${purpose}`, 32));
    cache.set(purpose, key);
  }
  return key;
}
