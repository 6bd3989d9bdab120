import "server-only";
import { getDb } from "@/lib/db";
import { appendCheckpoint, checkpointFile, latestCheckpoint, readCheckpoints, signCheckpoint } from "./checkpoints";
import { GENESIS_HASH } from "./hash";
import { auditKeyring, type AuditKeyring } from "./key";
import { toRow } from "./row";
import { checkRow, databaseIdentity, walkChain, type WalkState } from "./walk";

const envNumber = (name: string, fallback: number) => {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

export type CheckpointOutcome = "empty" | "up-to-date" | "not-due" | "written" | "broken";

/**
 * The periodic checkpoint (a job-worker maintenance task): when the log has grown by
 * DLQ_AUDIT_CHECKPOINT_ROWS (default 10,000) rows or DLQ_AUDIT_CHECKPOINT_MINUTES (default 10)
 * have passed since the latest checkpoint, verifies the rows written since that checkpoint (all of
 * them for the first one) and appends a signed checkpoint of the head. A head that does not verify
 * is never checkpointed: the break is logged for `npm run audit:verify` to report in full.
 */
export async function checkpointAuditChain(
  opts: { ring?: AuditKeyring; file?: string; now?: Date; everyRows?: number; everyMinutes?: number } = {},
): Promise<CheckpointOutcome> {
  const ring = opts.ring ?? auditKeyring();
  const file = opts.file ?? checkpointFile();
  const now = opts.now ?? new Date();
  const everyRows = opts.everyRows ?? envNumber("DLQ_AUDIT_CHECKPOINT_ROWS", 10_000);
  const everyMs = (opts.everyMinutes ?? envNumber("DLQ_AUDIT_CHECKPOINT_MINUTES", 10)) * 60_000;
  const db = await databaseIdentity();
  const [head] = await getDb().$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT id::text AS id FROM audit_log ORDER BY id DESC LIMIT 1`,
  );
  if (!head) return "empty";
  const latest = latestCheckpoint(readCheckpoints(file, ring), db);
  if (latest?.lastId === head.id) return "up-to-date";
  // Ids may skip (a rolled-back insert burns one), so this over-counts a little: fine for "due".
  if (
    latest &&
    BigInt(head.id) - BigInt(latest.lastId) < BigInt(everyRows) &&
    now.getTime() - Date.parse(latest.at) < everyMs
  )
    return "not-due";

  const state: WalkState = { expectedPrev: GENESIS_HASH, checked: 0, keyedSeen: false, legacy: 0, last: null };
  if (latest) {
    // The checkpointed row itself must still be what was checkpointed, contents included.
    const e = await getDb().auditEvent.findUnique({ where: { id: BigInt(latest.lastId) } });
    const row = e ? toRow(e) : null;
    const probe: WalkState = { expectedPrev: row?.prevHash ?? "", checked: 0, keyedSeen: false, legacy: 0, last: null };
    if (!row || row.hash !== latest.lastHash || checkRow(row, probe, ring)) {
      console.error(
        `[audit] row ${latest.lastId} no longer matches the checkpoint of ${latest.at} in ${file}: the audit log was rewritten or cut. Run npm run audit:verify.`,
      );
      return "broken";
    }
    Object.assign(state, {
      after: BigInt(latest.lastId),
      expectedPrev: latest.lastHash,
      checked: latest.count,
      keyedSeen: row.keyId !== null,
    });
  }
  const broken = await walkChain(state, ring, 1000);
  if (broken || !state.last) {
    if (broken)
      console.error(
        `[audit] the audit chain is broken at row ${broken.id}: ${broken.reason}. No checkpoint written; run npm run audit:verify.`,
      );
    return broken ? "broken" : "empty";
  }
  appendCheckpoint(
    file,
    signCheckpoint(
      {
        db,
        lastId: state.last.id,
        lastHash: state.last.hash,
        count: state.checked,
        at: now.toISOString(),
        keyId: ring.currentId,
      },
      ring,
    ),
  );
  return "written";
}
