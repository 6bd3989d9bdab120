/**
 * npm run triage:reencrypt
 * Re-encrypts triage index payloads under the current key (DLQ_INDEX_KEY_ID of DLQ_INDEX_KEYS),
 * after a rotation. Keep the old key in DLQ_INDEX_KEYS until this has finished. With PGlite, run it
 * while the console is stopped (one owner per database folder).
 */
import "dotenv/config";
import { closeDb } from "@/lib/db";
import { keyring } from "@/lib/crypto/payload-cipher";
import { reencryptIndex } from "@/lib/triage/reencrypt";

async function main() {
  const ring = keyring();
  console.log(`Re-encrypting index payloads under key "${ring.currentId}"…`);
  const n = await reencryptIndex({ log: (done) => process.stdout.write(`\r  ${done} payloads`) });
  console.log(
    `\nDone: ${n} payload(s) re-encrypted. Keys other than "${ring.currentId}" can now be removed from DLQ_INDEX_KEYS.`,
  );
}

main()
  .catch((e) => {
    console.error(
      `Re-encryption failed: ${e && typeof e === "object" && "userMessage" in e ? String((e as { userMessage: unknown }).userMessage) : (e as Error).message}`,
    );
    process.exitCode = 1;
  })
  .finally(() => closeDb());
