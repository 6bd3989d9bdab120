import "server-only";
import { randomUUID } from "node:crypto";
import { takesBinaryParams } from "@/lib/db-direct";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { BinaryArrayWriter } from "@/lib/pg-binary";
import { auditMac, GENESIS_HASH, normaliseDetails, type HashedFields } from "./hash";
import { auditKeyring, type AuditKeyring } from "./key";
import type { AuditEntry } from "./types";

/**
 * Many audit rows in ONE transaction: one advisory lock, one read of the chain's last hash, one
 * multi-row INSERT. Each row's MAC (under the current audit key, lib/audit/key.ts) links to the row before it exactly as single-row writes do
 * (verifyAuditChain walks by id, and ids are assigned in VALUES order by the one INSERT while the
 * lock is held), so batch and single-row writers interleave without forking the chain.
 *
 * Very large batches are split into INSERTs of CHUNK rows inside the same transaction.
 */
export const AUDIT_CHAIN_LOCK = 7_305_419_862_137n; // arbitrary constant, unique to the audit chain
const CHUNK = 5000;
const COLUMNS = [
  "operation_id",
  "scope",
  "at",
  "actor_id",
  "actor_email",
  "actor_role",
  "action",
  "outcome",
  "connection_id",
  "queue",
  "target",
  "request_id",
  "ip",
  "details",
  "prev_hash",
  "hash",
  "key_id",
] as const;
/** The columns' types, as json_to_recordset reads each row object. */
const TYPE_OF: Partial<Record<(typeof COLUMNS)[number], string>> = {
  operation_id: "uuid",
  at: "timestamptz",
  details: "jsonb",
};
const ROW_TYPES = COLUMNS.map((c) => `${c} ${TYPE_OF[c] ?? "text"}`).join(", ");
type Column = (typeof COLUMNS)[number];
type LinkedRow = Record<Exclude<Column, "details">, string | null> & { details: HashedFields["details"] };

/** The fields of a row before it is chained (everything hashed except prevHash). */
export function auditFields(entry: AuditEntry, at: string = new Date().toISOString()): Omit<HashedFields, "prevHash"> {
  return {
    operationId: entry.operationId ?? randomUUID(),
    scope: entry.scope ?? "operation",
    // Millisecond precision (the column is timestamptz(3)), so verification recomputes the same hash.
    at,
    actorId: entry.actor.id ?? null,
    actorEmail: entry.actor.email?.toLowerCase() ?? null,
    actorRole: entry.actor.role ?? null,
    action: entry.action,
    outcome: entry.outcome,
    connectionId: entry.connectionId ?? null,
    queue: entry.queue ?? null,
    target: entry.target ?? null,
    requestId: entry.requestId ?? null,
    ip: entry.ip ?? null,
    // Every row written for a token's request names the token, whichever use case wrote it.
    details: normaliseDetails(entry.actor.tokenId ? { ...entry.details, tokenId: entry.actor.tokenId } : entry.details),
  };
}

type Tx = Pick<PrismaClient, "$queryRawUnsafe">;

/** Inside a transaction: takes the chain lock, reads the last hash, inserts the rows chained. */
export async function insertChained(
  tx: Tx,
  rows: Array<Omit<HashedFields, "prevHash">>,
  ring: AuditKeyring = auditKeyring(),
): Promise<Array<{ id: string; operationId: string; hash: string }>> {
  if (rows.length === 0) return [];
  const keyId = ring.currentId;
  const key = ring.keys.get(keyId)!;
  await tx.$queryRawUnsafe(`SELECT 1 AS locked FROM pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK})`);
  const last = await tx.$queryRawUnsafe<Array<{ hash: string }>>(`SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1`);
  let prevHash = last[0]?.hash ?? GENESIS_HASH;
  const out: Array<{ id: string; operationId: string; hash: string }> = [];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const hashes: string[] = [];
    const linked = chunk.map((f) => {
      const hash = auditMac({ ...f, prevHash }, keyId, key);
      const row: LinkedRow = {
        operation_id: f.operationId,
        scope: f.scope,
        at: f.at,
        actor_id: f.actorId,
        actor_email: f.actorEmail,
        actor_role: f.actorRole,
        action: f.action,
        outcome: f.outcome,
        connection_id: f.connectionId,
        queue: f.queue,
        target: f.target,
        request_id: f.requestId,
        ip: f.ip,
        details: f.details,
        prev_hash: prevHash,
        hash,
        key_id: keyId,
      };
      hashes.push(hash);
      prevHash = hash;
      return row;
    });
    // One multi-row INSERT, its rows from one binary array per column (a DirectTx), or else from ONE
    // json parameter (an array of row objects, the details nested as they are: through Prisma, no
    // per-column array literal to build and escape, nothing per value to bind), expanded WITH
    // ORDINALITY and inserted in that order: ids come from the sequence in chain order,
    // checked below rather than assumed (if they ever were not, the transaction rolls back rather
    // than fork). The ids and hashes come back as one text value, in id order.
    const inserted = takesBinaryParams(tx)
      ? await tx.$queryRawUnsafe<Array<{ ids: string | null }>>(...unnestInsert(linked))
      : await tx.$queryRawUnsafe<Array<{ ids: string | null }>>(
          `WITH ins AS (
         INSERT INTO audit_log (${COLUMNS.join(", ")})
         SELECT u.${COLUMNS.join(", u.")}
         FROM ROWS FROM (json_to_recordset($1::json) AS (${ROW_TYPES})) WITH ORDINALITY AS u(${COLUMNS.join(", ")}, n)
         ORDER BY u.n
         RETURNING id, hash)
       SELECT string_agg(id::text || ' ' || hash, ',' ORDER BY id) AS ids FROM ins`,
          JSON.stringify(linked),
        );
    const byId = (inserted[0]?.ids ?? "").split(",").map((p) => {
      const at = p.indexOf(" ");
      return { id: p.slice(0, at), hash: p.slice(at + 1) };
    });
    if (byId.length !== chunk.length || byId.some((r, k) => r.hash !== hashes[k])) {
      throw new Error(
        "audit_log ids were not assigned in chain order; the batch was rolled back to keep the chain intact",
      );
    }
    for (let k = 0; k < chunk.length; k++)
      out.push({ id: byId[k].id, operationId: chunk[k].operationId, hash: hashes[k] });
  }
  return out;
}

/**
 * The same INSERT for a DirectTx (lib/db-direct.ts), as a statement and its parameters: a column
 * whose value is the same in every row (the operation, actor, queue, time and key of a job's
 * letters) is one text parameter; each other column is one binary text array (details as JSON
 * text), unnested WITH ORDINALITY. Against the json_to_recordset parameter (about 2 MB per 2,000
 * letters: 53 of the INSERT's 86 ms, EXPLAIN ANALYZE in the redrive bench), Postgres reads each
 * element as it is; against an array for every column, it does not unnest eleven arrays of one
 * repeated value (each unnested array cost about 0.5 ms per 2,000 rows).
 */
function unnestInsert(rows: LinkedRow[]): [string, ...unknown[]] {
  const params: unknown[] = [];
  const varying: Column[] = [];
  const arrays: string[] = [];
  const values = COLUMNS.map((c) => {
    const cast = TYPE_OF[c] ? `::${TYPE_OF[c]}` : "";
    const first = rows[0][c];
    if (c !== "details" && rows.every((r) => r[c] === first)) {
      params.push(first);
      return `$${params.length}::text${cast}`;
    }
    const w = new BinaryArrayWriter("text", 64 * rows.length + 256);
    if (c === "details") for (const r of rows) w.text(r.details == null ? null : JSON.stringify(r.details));
    else for (const r of rows) w.text(r[c] as string | null);
    params.push(w.finish());
    varying.push(c);
    arrays.push(`$${params.length}::text[]`);
    return `u.${c}${cast}`;
  });
  return [
    `WITH ins AS (
         INSERT INTO audit_log (${COLUMNS.join(", ")})
         SELECT ${values.join(", ")}
         FROM unnest(${arrays.join(", ")}) WITH ORDINALITY AS u(${varying.join(", ")}, n)
         ORDER BY u.n
         RETURNING id, hash)
       SELECT string_agg(id::text || ' ' || hash, ',' ORDER BY id) AS ids FROM ins`,
    ...params,
  ];
}
