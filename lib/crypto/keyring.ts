import "server-only";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AppError } from "@/lib/errors";

/**
 * A keyring read from the environment, the one shape every server secret of the console takes
 * (the index's payload keys, the audit chain's MAC keys), first match wins:
 * - `<PREFIX>_KEYS="k2:base64,k1:base64"` with `<PREFIX>_KEY_ID=k2`: new writes use the current id,
 *   older ids stay so what was written before a rotation can still be read or verified;
 * - `<PREFIX>_KEY=base64`: one key, id "env";
 * - neither: a key generated once into `<data dir>/<file>` (mode 600, id "local"), with a warning.
 * Keys are 32 random bytes in base64 (`openssl rand -base64 32`).
 */
export interface Keyring {
  currentId: string;
  keys: Map<string, Buffer>;
  source: "keyring" | "single" | "generated";
}

export interface KeyringSpec {
  /** Environment variable prefix, e.g. "DLQ_INDEX". */
  prefix: string;
  /** What the key is, in messages: "Index key". */
  label: string;
  /** File name of the generated key in the data folder. */
  file: string;
  /** The warning printed when a key is generated into `file`. */
  generatedWarning: (file: string) => string;
}

/** The folder beside the PGlite folder (.data/ by default), where start.sh's generated secrets live too. */
export function defaultDataRoot(): string {
  return path.dirname(path.resolve(process.env.DLQ_CONSOLE_DATA_DIR || path.join(".data", "pglite")));
}

function decodeKey(label: string, id: string, b64: string): Buffer {
  const key = Buffer.from(b64.trim(), "base64");
  if (key.length !== 32) {
    throw new AppError("internal:config", {
      userMessage: `${label} "${id}" must be 32 bytes in base64 (got ${key.length} bytes). Generate one with: openssl rand -base64 32`,
    });
  }
  return key;
}

export function keyringFromSpec(
  spec: KeyringSpec,
  env: Record<string, string | undefined>,
  dataDir = defaultDataRoot(),
): Keyring {
  const { prefix, label } = spec;
  const list = env[`${prefix}_KEYS`];
  if (list) {
    const keys = new Map<string, Buffer>();
    for (const part of list
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)) {
      const i = part.indexOf(":");
      if (i <= 0)
        throw new AppError("internal:config", { userMessage: `${prefix}_KEYS must look like "id:base64,id2:base64".` });
      const id = part.slice(0, i);
      if (!/^[A-Za-z0-9._-]{1,32}$/.test(id))
        throw new AppError("internal:config", {
          userMessage: `${label} id "${id}": use letters, digits, . _ - (at most 32).`,
        });
      keys.set(id, decodeKey(label, id, part.slice(i + 1)));
    }
    const currentId = env[`${prefix}_KEY_ID`] ?? [...keys.keys()][0];
    if (!currentId || !keys.has(currentId)) {
      throw new AppError("internal:config", {
        userMessage: `${prefix}_KEY_ID "${currentId ?? ""}" is not one of the ids in ${prefix}_KEYS.`,
      });
    }
    return { currentId, keys, source: "keyring" };
  }
  const single = env[`${prefix}_KEY`];
  if (single) return { currentId: "env", keys: new Map([["env", decodeKey(label, "env", single)]]), source: "single" };
  const file = path.join(dataDir, spec.file);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, randomBytes(32).toString("base64"), { mode: 0o600, flag: "wx" });
      console.warn(spec.generatedWarning(file));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e; // another process generated it first
    }
  }
  return {
    currentId: "local",
    keys: new Map([["local", decodeKey(label, "local", readFileSync(file, "utf8"))]]),
    source: "generated",
  };
}
