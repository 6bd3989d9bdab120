import "server-only";
import { databaseMode, getDb } from "@/lib/db";
import { auditHash, auditMac } from "./hash";
import type { AuditKeyring } from "./key";
import { toRow } from "./row";
import type { AuditRow } from "./types";

/** Where a walk of the chain starts: the genesis, or a row already known good (a checkpoint). */
export interface WalkState {
  /** Rows with id above this are walked; undefined: from the first row. */
  after?: bigint;
  expectedPrev: string;
  /** Rows verified so far (including those before `after`). */
  checked: number;
  /** A keyed row has been seen: a legacy (unkeyed) row after it is a forgery or a rewrite. */
  keyedSeen: boolean;
  legacy: number;
  last: { id: string; hash: string } | null;
}

export interface Break {
  id: string | null;
  reason: string;
}

/** Checks one row's link and updates the state; returns why it is broken, or null. */
export function checkRow(row: AuditRow, state: WalkState, ring: AuditKeyring): Break | null {
  const { id: _id, hash: _hash, keyId, ...fields } = row;
  if (keyId === null) {
    if (state.keyedSeen) {
      return {
        id: row.id,
        reason:
          "the row carries an unkeyed hash after rows chained with the audit key: it was written or rewritten by someone without the key",
      };
    }
    if (auditHash(fields) !== row.hash)
      return { id: row.id, reason: "the row's contents do not match its hash: it was changed after it was written" };
    state.legacy++;
  } else {
    const key = ring.keys.get(keyId);
    if (!key) {
      return {
        id: row.id,
        reason: `the row was chained with audit key "${keyId}", which this console does not have: add that key to DLQ_AUDIT_KEYS to verify the log`,
      };
    }
    if (auditMac(fields, keyId, key) !== row.hash) {
      return {
        id: row.id,
        reason:
          "the row's contents do not match its MAC: it was changed after it was written, or written without the audit key",
      };
    }
    state.keyedSeen = true;
  }
  if (row.prevHash !== state.expectedPrev) {
    return {
      id: row.id,
      reason:
        "the row does not link to the row before it: an earlier row was changed, removed or inserted out of order",
    };
  }
  state.expectedPrev = row.hash;
  state.checked++;
  state.last = { id: row.id, hash: row.hash };
  return null;
}

/**
 * Walks the log in id order from `state`, in batches; `onRow` runs after each good row (checkpoint
 * comparisons). Stops at the first break.
 */
export async function walkChain(
  state: WalkState,
  ring: AuditKeyring,
  batchSize: number,
  onRow: (row: AuditRow, state: WalkState) => Break | null = () => null,
): Promise<Break | null> {
  const db = getDb();
  for (;;) {
    const batch = await db.auditEvent.findMany({
      where: state.after === undefined ? {} : { id: { gt: state.after } },
      orderBy: { id: "asc" },
      take: batchSize,
    });
    for (const e of batch) {
      const row = toRow(e);
      const broken = checkRow(row, state, ring) ?? onRow(row, state);
      if (broken) return broken;
    }
    if (batch.length < batchSize) return null;
    state.after = batch[batch.length - 1].id;
  }
}

/**
 * Names the database a checkpoint is about. On a server: its system identifier and the database's
 * name, which a dropped and re-created database keeps (so checkpoints still hold it to account).
 * Embedded: the checkpoint file sits beside the folder, so the name alone.
 */
export async function databaseIdentity(): Promise<string> {
  const db = getDb();
  if (databaseMode() === "pglite") {
    const [r] = await db.$queryRawUnsafe<Array<{ name: string }>>(`SELECT current_database() AS name`);
    return `embedded/${r.name}`;
  }
  const [r] = await db.$queryRawUnsafe<Array<{ sys: string; name: string }>>(
    `SELECT system_identifier::text AS sys, current_database() AS name FROM pg_control_system()`,
  );
  return `${r.sys}/${r.name}`;
}
