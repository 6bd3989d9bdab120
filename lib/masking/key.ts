import "server-only";
import { hkdfSync } from "node:crypto";
import { keyring } from "@/lib/crypto/payload-cipher";
import { processState } from "@/lib/process-state";

const hashKey = processState("masking-hash-key", () => ({ key: null as Buffer | null }));

/**
 * The key of masking hashes: DLQ_MASKING_KEY when set, else derived from the index key (so hashes
 * are stable across restarts without another secret to manage). Never sent anywhere.
 */
export function maskingHashKey(): Buffer {
  if (hashKey.key) return hashKey.key;
  const env = process.env.DLQ_MASKING_KEY;
  if (env) hashKey.key = Buffer.from(env, "utf8");
  else {
    const ring = keyring();
    hashKey.key = Buffer.from(
      hkdfSync("sha256", ring.keys.get(ring.currentId)!, Buffer.alloc(0), "dlq-console masking hash v1", 32),
    );
  }
  return hashKey.key;
}
