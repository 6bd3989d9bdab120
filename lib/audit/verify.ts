import "server-only";
import {
  appendCheckpoint,
  checkpointFile,
  latestCheckpoint,
  readCheckpoints,
  signCheckpoint,
  type Checkpoint,
} from "./checkpoints";
import { GENESIS_HASH } from "./hash";
import { auditKeyring, type AuditKeyring } from "./key";
import type { AuditChainResult } from "./types";
import { databaseIdentity, walkChain, type Break, type WalkState } from "./walk";

export type { AuditChainResult };

const at = (cp: Checkpoint) => `${cp.at.slice(0, 19).replace("T", " ")} UTC`;

/** Why the log falls short of a checkpoint it never reached (walk finished, row not seen). */
function shortOf(cp: Checkpoint, line: number, file: string, state: WalkState): Break {
  const where = `checkpoint line ${line} of ${file} (${at(cp)})`;
  if (!state.last) {
    return {
      id: null,
      reason: `the audit log is empty, but ${where} recorded ${cp.count} row(s) up to row ${cp.lastId}: the table was emptied or the database replaced. If it was replaced on purpose, move that file aside`,
    };
  }
  if (BigInt(cp.lastId) > BigInt(state.last.id)) {
    return {
      id: null,
      reason: `the log ends at row ${state.last.id} (${state.checked} rows), but ${where} recorded ${cp.count} rows up to row ${cp.lastId}: rows were cut off the end`,
    };
  }
  return { id: cp.lastId, reason: `row ${cp.lastId}, recorded by ${where}, is missing: rows were removed` };
}

/**
 * Walks the whole log in id order, in batches, checking each row's MAC (or legacy hash) and its link
 * to the row before, and holds the log to every checkpoint of this database on file. When all holds,
 * appends a checkpoint of the head (unless the latest one already names it).
 */
export async function verifyAuditChain(
  batchSize = 1000,
  opts: { ring?: AuditKeyring; file?: string } = {},
): Promise<AuditChainResult> {
  const ring = opts.ring ?? auditKeyring();
  const file = opts.file ?? checkpointFile();
  const db = await databaseIdentity();
  const lines = readCheckpoints(file, ring);
  const state: WalkState = { expectedPrev: GENESIS_HASH, checked: 0, keyedSeen: false, legacy: 0, last: null };
  const mine = lines.filter((l) => l.kind !== "invalid" && l.cp.db === db) as Array<{
    line: number;
    cp: Checkpoint;
    kind: string;
  }>;
  const result = (broken: Break | null, written = false, writeError?: string): AuditChainResult => ({
    ok: !broken,
    checked: state.checked,
    ...(broken ? { brokenAt: broken } : {}),
    checkpoints: { file, checked: mine.length, written, ...(writeError ? { writeError } : {}) },
    legacyRows: state.legacy,
  });

  const invalid = lines.find((l) => l.kind === "invalid");
  if (invalid) {
    return result({
      id: null,
      reason: `line ${invalid.line} of ${file} is not a checkpoint signed with this console's audit key: the file was altered or a checkpoint forged`,
    });
  }
  const unknown = mine.find((l) => l.kind === "unknown-key");
  if (unknown) {
    return result({
      id: null,
      reason: `checkpoint line ${unknown.line} of ${file} was signed with audit key "${unknown.cp.keyId}", which this console does not have: add it to DLQ_AUDIT_KEYS to verify`,
    });
  }

  const byRow = new Map<string, Array<{ line: number; cp: Checkpoint }>>();
  for (const l of mine) byRow.set(l.cp.lastId, [...(byRow.get(l.cp.lastId) ?? []), l]);
  const seen = new Set<string>();
  const broken = await walkChain(state, ring, batchSize, (row, s) => {
    for (const { line, cp } of byRow.get(row.id) ?? []) {
      seen.add(row.id);
      if (cp.lastHash !== row.hash) {
        return {
          id: row.id,
          reason: `the row is not the one checkpoint line ${line} of ${file} (${at(cp)}) recorded: the log was rewritten up to here`,
        };
      }
      if (cp.count !== s.checked) {
        return {
          id: row.id,
          reason: `checkpoint line ${line} of ${file} (${at(cp)}) counted ${cp.count} rows up to here, the log now has ${s.checked}: rows were removed or added`,
        };
      }
    }
    return null;
  });
  if (broken) return result(broken);
  const missed = mine
    .filter((l) => !seen.has(l.cp.lastId))
    .sort((a, b) => (BigInt(b.cp.lastId) > BigInt(a.cp.lastId) ? 1 : -1))[0];
  if (missed) return result(shortOf(missed.cp, missed.line, file, state));

  const head = state.last;
  if (!head || latestCheckpoint(lines, db)?.lastId === head.id) return result(null);
  try {
    appendCheckpoint(
      file,
      signCheckpoint(
        {
          db,
          lastId: head.id,
          lastHash: head.hash,
          count: state.checked,
          at: new Date().toISOString(),
          keyId: ring.currentId,
        },
        ring,
      ),
    );
    return result(null, true);
  } catch (e) {
    console.error(`[audit] could not write a checkpoint to ${file}: ${(e as Error).message}`);
    return result(
      null,
      false,
      `could not write a checkpoint to ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}
