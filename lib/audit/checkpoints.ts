import "server-only";
import { createHmac, timingSafeEqual } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { canonicalJson } from "./hash";
import { defaultDataRoot } from "@/lib/crypto/keyring";
import { checkpointKey, type AuditKeyring } from "./key";

/**
 * Checkpoints of the audit chain's head, kept OUTSIDE the database: one signed JSON line per
 * checkpoint in an append-only file. A keyed chain alone cannot show that rows were cut off its end
 * or that the table was emptied; a checkpoint says "on <at>, this database's log had <count> rows
 * ending at row <lastId> with MAC <lastHash>", and verification holds the database to it.
 *
 * Ship the file somewhere the database's holders cannot write (a log collector, another host):
 * it is only as far out of their reach as where it is kept.
 */
export interface Checkpoint {
  v: 1;
  /** Which database the checkpoint is about (databaseIdentity). */
  db: string;
  lastId: string;
  lastHash: string;
  /** Rows in the log up to and including lastId. */
  count: number;
  at: string;
  /** The audit key the signature was made with (a key derived from it, see checkpointKey). */
  keyId: string;
  sig: string;
}

export type CheckpointBody = Omit<Checkpoint, "sig" | "v">;

/** DLQ_AUDIT_CHECKPOINTS, else <data dir>/audit-checkpoints.jsonl beside the embedded database. */
export function checkpointFile(): string {
  return path.resolve(process.env.DLQ_AUDIT_CHECKPOINTS || path.join(defaultDataRoot(), "audit-checkpoints.jsonl"));
}

function signatureOf(body: Omit<Checkpoint, "sig">, key: Buffer): string {
  return createHmac("sha256", checkpointKey(key)).update(canonicalJson(body)).digest("hex");
}

/** A checkpoint signed with the keyring's current key. */
export function signCheckpoint(body: CheckpointBody, ring: AuditKeyring): Checkpoint {
  const unsigned = { v: 1 as const, ...body, keyId: ring.currentId };
  return { ...unsigned, sig: signatureOf(unsigned, ring.keys.get(ring.currentId)!) };
}

export type ParsedLine =
  | { line: number; kind: "valid"; cp: Checkpoint }
  | { line: number; kind: "unknown-key"; cp: Checkpoint }
  | { line: number; kind: "invalid" };

function isCheckpointShape(x: unknown): x is Checkpoint {
  const c = x as Record<string, unknown> | null;
  return (
    !!c &&
    c.v === 1 &&
    typeof c.db === "string" &&
    typeof c.lastId === "string" &&
    /^\d{1,19}$/.test(c.lastId) &&
    typeof c.lastHash === "string" &&
    Number.isSafeInteger(c.count) &&
    typeof c.at === "string" &&
    typeof c.keyId === "string" &&
    typeof c.sig === "string"
  );
}

/** Every non-empty line of a checkpoint file, each valid, signed with a key we lack, or invalid. */
export function parseCheckpoints(text: string, ring: AuditKeyring): ParsedLine[] {
  const out: ParsedLine[] = [];
  for (const [i, raw] of text.split("\n").entries()) {
    if (!raw.trim()) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      out.push({ line: i + 1, kind: "invalid" });
      continue;
    }
    if (!isCheckpointShape(parsed)) {
      out.push({ line: i + 1, kind: "invalid" });
      continue;
    }
    const { sig, ...body } = parsed;
    const key = ring.keys.get(body.keyId);
    if (!key) {
      out.push({ line: i + 1, kind: "unknown-key", cp: parsed });
      continue;
    }
    const want = Buffer.from(signatureOf(body, key), "hex");
    const got = Buffer.from(sig, "hex");
    const ok = got.length === want.length && timingSafeEqual(got, want);
    out.push(ok ? { line: i + 1, kind: "valid", cp: parsed } : { line: i + 1, kind: "invalid" });
  }
  return out;
}

export function readCheckpoints(file: string, ring: AuditKeyring): ParsedLine[] {
  return existsSync(file) ? parseCheckpoints(readFileSync(file, "utf8"), ring) : [];
}

/** Appends one line (O_APPEND: lines from several processes never interleave at this size). */
export function appendCheckpoint(file: string, cp: Checkpoint): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  appendFileSync(file, `${JSON.stringify(cp)}\n`, { mode: 0o600 });
}

/** The valid checkpoint of `db` with the highest row id, if any. */
export function latestCheckpoint(lines: ParsedLine[], db: string): Checkpoint | null {
  let best: Checkpoint | null = null;
  for (const l of lines) {
    if (l.kind === "valid" && l.cp.db === db && (!best || BigInt(l.cp.lastId) > BigInt(best.lastId))) best = l.cp;
  }
  return best;
}
