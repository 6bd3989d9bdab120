import "server-only";
import { createCipheriv, createDecipheriv, createSecretKey, randomFillSync, type KeyObject } from "node:crypto";
import { AppError } from "@/lib/errors";
import { processState } from "@/lib/process-state";
import { defaultDataRoot, keyringFromSpec, type Keyring, type KeyringSpec } from "./keyring";

/**
 * Payload encryption for the triage index: AES-256-GCM, a random 96-bit nonce per payload, the key
 * id stored beside the ciphertext. Stored form: nonce (12) || ciphertext || tag (16). The AAD binds
 * a ciphertext to its row (connection, queue, letter id), so a payload moved to another row fails
 * authentication like a tampered one.
 *
 * Keys (base64 of 32 bytes), first match wins:
 * - DLQ_INDEX_KEYS="k2:base64,k1:base64" with DLQ_INDEX_KEY_ID=k2: a keyring; new payloads use
 *   DLQ_INDEX_KEY_ID, older ids stay to decrypt rows written before a rotation.
 * - DLQ_INDEX_KEY=base64: one key, id "env".
 * - Neither: a key generated once into <data dir>/index-key (mode 600, id "local"), with a warning.
 *   Fine for a laptop; in production set DLQ_INDEX_KEYS or DLQ_INDEX_KEY.
 */
export type { Keyring } from "./keyring";

const NONCE = 12;
const TAG = 16;

const INDEX_KEYS: KeyringSpec = {
  prefix: "DLQ_INDEX",
  label: "Index key",
  file: "index-key",
  generatedWarning: (file) =>
    `[triage] no DLQ_INDEX_KEY set: generated a payload key in ${file}. Set DLQ_INDEX_KEY (or DLQ_INDEX_KEYS) in production.`,
};

/** Parses the keyring from an environment (exported for tests). */
export function keyringFromEnv(env: Record<string, string | undefined>, dataDir = defaultDataRoot()): Keyring {
  return keyringFromSpec(INDEX_KEYS, env, dataDir);
}

const ring = processState("keyring", () => ({ keyring: null as Keyring | null }));

/** The process keyring, read from the environment on first use. */
export function keyring(): Keyring {
  ring.keyring ??= keyringFromEnv(process.env);
  return ring.keyring;
}

/** For tests: forget the cached keyring so the next call reads the environment again. */
export function resetKeyring(): void {
  ring.keyring = null;
}

export interface Sealed {
  keyId: string;
  data: Buffer;
}

/**
 * Imported key objects, one per raw key: createCipheriv with a raw Buffer imports the key again on
 * every call (a scan encrypts every letter). Keyed by the Buffer, so a dropped keyring drops them.
 */
const keyObjects = new WeakMap<Buffer, KeyObject>();

function keyObject(raw: Buffer): KeyObject {
  let k = keyObjects.get(raw);
  if (!k) {
    k = createSecretKey(raw);
    keyObjects.set(raw, k);
  }
  return k;
}

/**
 * Nonces come from a pool filled by the CSPRNG 4,096 nonces at a time, each slice used once: a
 * scan encrypts every letter it reads, and one RAND_bytes call per nonce cost ~8 µs against ~1.5 µs
 * (measured with process.cpuUsage, 20,000 calls). The nonces stay uniformly random.
 */
const noncePool = Buffer.alloc(NONCE * 4096);
let nonceAt = noncePool.length;

/** Writes a fresh nonce at the start of `out`. */
function takeNonce(out: Buffer): void {
  if (nonceAt + NONCE > noncePool.length) {
    randomFillSync(noncePool);
    nonceAt = 0;
  }
  noncePool.copy(out, 0, nonceAt, nonceAt + NONCE);
  noncePool.fill(0, nonceAt, nonceAt + NONCE); // never handed out twice, even if the pool logic were wrong
  nonceAt += NONCE;
}

/**
 * The sealed form is written into one buffer sized up front (GCM's ciphertext is as long as the
 * plaintext): no separate nonce copy and no concatenation per payload.
 */
export function encryptPayload(plain: Uint8Array, aad: string, ring: Keyring = keyring()): Sealed {
  const key = keyObject(ring.keys.get(ring.currentId)!);
  const out = Buffer.allocUnsafe(NONCE + plain.length + TAG);
  takeNonce(out);
  const c = createCipheriv("aes-256-gcm", key, out.subarray(0, NONCE));
  c.setAAD(Buffer.from(aad, "utf8"));
  const body = c.update(plain);
  const last = c.final();
  if (body.length + last.length !== plain.length) throw new Error("AES-GCM changed the payload's length");
  body.copy(out, NONCE);
  last.copy(out, NONCE + body.length);
  c.getAuthTag().copy(out, NONCE + plain.length);
  return { keyId: ring.currentId, data: out };
}

/** Throws `internal:payload-integrity` when the ciphertext, its row or its key do not match. */
export function decryptPayload(sealed: Sealed, aad: string, ring: Keyring = keyring()): Buffer {
  const key = ring.keys.get(sealed.keyId);
  if (!key) {
    throw new AppError("unavailable:index-key", {
      userMessage: `The payload was encrypted with key "${sealed.keyId}", which this console no longer has. Add it back to DLQ_INDEX_KEYS to read it.`,
    });
  }
  if (sealed.data.length < NONCE + TAG) throw integrity();
  const d = createDecipheriv("aes-256-gcm", keyObject(key), sealed.data.subarray(0, NONCE));
  d.setAAD(Buffer.from(aad, "utf8"));
  d.setAuthTag(sealed.data.subarray(sealed.data.length - TAG));
  try {
    return Buffer.concat([d.update(sealed.data.subarray(NONCE, sealed.data.length - TAG)), d.final()]);
  } catch (e) {
    throw integrity(e);
  }
}

function integrity(cause?: unknown) {
  return new AppError("internal:payload-integrity", {
    cause,
    message: "GCM authentication failed for an index payload",
    userMessage:
      "A stored payload failed its integrity check (it was altered or belongs to another letter). Rescan the DLQ to index it again.",
  });
}

/** The AAD of an index row's payload. */
export function payloadAad(connectionId: string, queue: string, letterId: string): string {
  return JSON.stringify([connectionId, queue, letterId]);
}
