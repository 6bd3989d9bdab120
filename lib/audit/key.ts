import "server-only";
import { hkdfSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AppError } from "@/lib/errors";
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
export interface AuditKeyring {
  currentId: string;
  keys: Map<string, Buffer>;
  source: "keyring" | "single" | "generated";
}

function decodeKey(id: string, b64: string): Buffer {
  const key = Buffer.from(b64.trim(), "base64");
  if (key.length !== 32) {
    throw new AppError("internal:config", { userMessage: `Audit key "${id}" must be 32 bytes in base64 (got ${key.length} bytes). Generate one with: openssl rand -base64 32` });
  }
  return key;
}

/** The folder beside the PGlite folder (.data/ by default), where generated secrets live. */
export function defaultDataRoot(): string {
  return path.dirname(path.resolve(process.env.DLQ_CONSOLE_DATA_DIR || path.join(".data", "pglite")));
}

/** Parses the audit keyring from an environment (exported for tests). */
export function auditKeyringFromEnv(env: Record<string, string | undefined>, dataDir = defaultDataRoot()): AuditKeyring {
  if (env.DLQ_AUDIT_KEYS) {
    const keys = new Map<string, Buffer>();
    for (const part of env.DLQ_AUDIT_KEYS.split(",").map((s) => s.trim()).filter(Boolean)) {
      const i = part.indexOf(":");
      if (i <= 0) throw new AppError("internal:config", { userMessage: 'DLQ_AUDIT_KEYS must look like "id:base64,id2:base64".' });
      const id = part.slice(0, i);
      if (!/^[A-Za-z0-9._-]{1,32}$/.test(id)) throw new AppError("internal:config", { userMessage: `Audit key id "${id}": use letters, digits, . _ - (at most 32).` });
      keys.set(id, decodeKey(id, part.slice(i + 1)));
    }
    const currentId = env.DLQ_AUDIT_KEY_ID ?? [...keys.keys()][0];
    if (!currentId || !keys.has(currentId)) {
      throw new AppError("internal:config", { userMessage: `DLQ_AUDIT_KEY_ID "${currentId ?? ""}" is not one of the ids in DLQ_AUDIT_KEYS.` });
    }
    return { currentId, keys, source: "keyring" };
  }
  if (env.DLQ_AUDIT_KEY) return { currentId: "env", keys: new Map([["env", decodeKey("env", env.DLQ_AUDIT_KEY)]]), source: "single" };
  const file = path.join(dataDir, "audit-key");
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" });
      console.warn(`[audit] no DLQ_AUDIT_KEY set: generated the audit chain's key in ${file}. Keep it out of the database's reach; in production set DLQ_AUDIT_KEY (or DLQ_AUDIT_KEYS).`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e; // another process generated it first
    }
  }
  return { currentId: "local", keys: new Map([["local", decodeKey("local", readFileSync(file, "utf8"))]]), source: "generated" };
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
