import "server-only";
import { hkdfSync } from "node:crypto";
import { defaultDataRoot, keyringFromSpec, type Keyring, type KeyringSpec } from "@/lib/crypto/keyring";
import { processState } from "@/lib/process-state";

/**
 * The audit MAC keys. They are never written to the database: whoever holds only the database
 * cannot compute a row's MAC, so cannot rewrite a row, append a forged one, or re-chain the rest.
 *
 * Keys (base64 of 32 bytes), first match wins, like the index keyring:
 * - DLQ_AUDIT_KEYS="a2:base64,a1:base64" with DLQ_AUDIT_KEY_ID=a2: new rows use DLQ_AUDIT_KEY_ID;
 *   older ids stay so rows written before a rotation still verify.
 * - DLQ_AUDIT_KEY=base64: one key, id "env".
 * - Neither: a key generated once into <data dir>/audit-key (mode 600, id "local"), with a warning.
 */
export type AuditKeyring = Keyring;

const AUDIT_KEYS: KeyringSpec = {
  prefix: "DLQ_AUDIT",
  label: "Audit key",
  file: "audit-key",
  generatedWarning: (file) =>
    `[audit] no DLQ_AUDIT_KEY set: generated the audit chain's key in ${file}. Keep it out of the database's reach; in production set DLQ_AUDIT_KEY (or DLQ_AUDIT_KEYS).`,
};

/** Parses the audit keyring from an environment (exported for tests). */
export function auditKeyringFromEnv(
  env: Record<string, string | undefined>,
  dataDir = defaultDataRoot(),
): AuditKeyring {
  return keyringFromSpec(AUDIT_KEYS, env, dataDir);
}

const ring = processState("audit-keyring", () => ({ keyring: null as AuditKeyring | null }));

/** The process's audit keyring, read from the environment on first use. */
export function auditKeyring(): AuditKeyring {
  ring.keyring ??= auditKeyringFromEnv(process.env);
  return ring.keyring;
}

/** For tests: forget the cached keyring so the next call reads the environment again. */
export function resetAuditKeyring(): void {
  ring.keyring = null;
}

/**
 * The key that signs checkpoints, derived from an audit key (HKDF-SHA256), so a checkpoint MAC can
 * never be replayed as a row MAC or the other way round.
 */
export function checkpointKey(auditKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", auditKey, Buffer.alloc(0), "dlq-console audit checkpoint v1", 32));
}
