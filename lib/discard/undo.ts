import "server-only";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { recordAudit, recordAuditBatch, type AuditEntry } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { getArchivedMany, SUMMARY_COLUMNS, toSummary, type ArchivedSummary } from "@/lib/archive/queries";
import { openEnvelope, openPayload } from "@/lib/archive/store";
import { getDb } from "@/lib/db";
import { AppError, asAppError } from "@/lib/errors";
import { auditActor } from "@/lib/use-case/audited";
import { adapterFor } from "@/lib/use-case/connection";
import { removeDiscardLeftovers } from "./leftovers";

/**
 * Undo a discard: archived letters go back into the DLQ they were discarded from. The archive
 * (lib/archive) keeps and shows what a discard took; putting it back is the discard's own undo.
 */

/** A restore claim older than this is taken to belong to a process that died (the row can be restored again). */
const STALE_RESTORE_MINUTES = 10;

/** An undo's operation-level audit row; it names the DLQ when every letter came from one. */
function undoEntry(
  actor: Actor,
  meta: RequestMeta,
  operationId: string,
  letters: Array<{ connectionId: string; queue: string }>,
  action: string,
  outcome: AuditEntry["outcome"],
  details: Record<string, unknown>,
): AuditEntry {
  const dlqs = [...new Set(letters.map((l) => `${l.connectionId}/${l.queue}`))];
  const single = dlqs.length === 1 ? letters[0] : undefined;
  return {
    actor: auditActor(actor),
    action,
    outcome,
    operationId,
    connectionId: single?.connectionId ?? null,
    queue: single?.queue ?? null,
    target: operationId,
    requestId: meta.requestId,
    ip: meta.ip,
    details: { ...details, dlqs: dlqs.slice(0, 20) },
  };
}

/**
 * The undo's attempt on record before anything is re-published (`archive.restore_started`, the
 * claimed archive rows under the undo's operation id): a process that dies mid-way leaves the
 * attempt in the log, and `archive.restore` (with one `letter.restore` per letter) says how it
 * ended. When the attempt cannot be recorded nothing is re-published and the claims are let go.
 */
async function auditAttempt(
  actor: Actor,
  meta: RequestMeta,
  operationId: string,
  reason: string,
  requested: number,
  claimed: ArchivedSummary[],
) {
  if (claimed.length === 0) return;
  try {
    await recordAudit(
      undoEntry(actor, meta, operationId, claimed, "archive.restore_started", "success", {
        reason,
        requested,
        claimed: claimed.length,
        archiveIds: claimed.map((c) => c.id),
      }),
    );
  } catch (e) {
    await getDb()
      .$executeRawUnsafe(
        `UPDATE archived_letters SET restore_state = 'failed', restore_error = $2 WHERE id = ANY($1::uuid[]) AND restore_operation_id = $3::uuid`,
        claimed.map((c) => c.id),
        "The undo could not be recorded in the audit log, so nothing was put back.",
        operationId,
      )
      .catch(() => undefined);
    throw e;
  }
}

const restoreSchema = z.object({
  ids: z
    .array(z.string().uuid())
    .min(1, "Choose at least one archived letter.")
    .max(500, "Undo at most 500 letters at a time."),
  reason: z.string().trim().min(3, "State why these letters are put back.").max(2000),
});

export interface RestoreOutcome {
  id: string;
  letterId: string;
  connectionId: string;
  queue: string;
  outcome: "restored" | "failed" | "skipped";
  /** The letter's id in the DLQ now, where the broker tells it. */
  newLetterId: string | null;
  reason: string | null;
}

export interface RestoreResult {
  operationId: string;
  restored: number;
  failed: number;
  skipped: number;
  outcomes: RestoreOutcome[];
}

/**
 * Undo: re-publishes archived letters into the DLQ they were discarded from, with broker
 * confirmation. Each row is claimed first (restore_state "restoring", one UPDATE): a row already
 * restored, or being restored by another request, is skipped, so no letter is restored twice at
 * once. Audited `archive.restore` (operation) plus one `letter.restore` row per letter.
 */
export async function restoreArchived(actor: Actor, meta: RequestMeta, input: unknown): Promise<RestoreResult> {
  const scope = { action: "archive.restore" };
  await authorize(actor, "archive:restore", { ...scope, meta });
  const parsed = restoreSchema.safeParse(input);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new AppError("bad_request:restore", { userMessage: first?.message ?? "The undo request is not valid." });
  }
  const p = parsed.data;
  const ids = [...new Set(p.ids)];
  const operationId = randomUUID();
  const db = getDb();
  const claimed = (
    await db.$queryRawUnsafe<Array<Record<string, unknown>>>(
      `UPDATE archived_letters SET restore_state = 'restoring', restore_claimed_at = now(), restore_operation_id = $2::uuid, restore_error = NULL
       WHERE id = ANY($1::uuid[]) AND (restore_state IS NULL OR restore_state = 'failed'
         OR (restore_state = 'restoring' AND restore_claimed_at < now() - ($3::int * interval '1 minute')))
       RETURNING ${SUMMARY_COLUMNS}`,
      ids,
      operationId,
      STALE_RESTORE_MINUTES,
    )
  ).map(toSummary);
  const claimedIds = new Set(claimed.map((c) => c.id));
  await auditAttempt(actor, meta, operationId, p.reason, ids.length, claimed);
  const outcomes: RestoreOutcome[] = [];
  const others = ids.filter((id) => !claimedIds.has(id));
  if (others.length) {
    const rows = (
      await db.$queryRawUnsafe<Array<Record<string, unknown>>>(
        `SELECT ${SUMMARY_COLUMNS} FROM archived_letters WHERE id = ANY($1::uuid[])`,
        others,
      )
    ).map(toSummary);
    const found = new Map(rows.map((r) => [r.id, r]));
    for (const id of others) {
      const r = found.get(id);
      outcomes.push({
        id,
        letterId: r?.letterId ?? "",
        connectionId: r?.connectionId ?? "",
        queue: r?.queue ?? "",
        outcome: "skipped",
        newLetterId: null,
        reason: !r
          ? "Not in the archive (expired, or never there)."
          : r.restoreState === "restored"
            ? `Already put back ${r.restoredAt} by ${r.restoredBy ?? "someone"}.`
            : "Another undo of this letter is in progress.",
      });
    }
  }

  // One republish call per DLQ and discard (Kafka clears only the handled marks of that discard).
  const groups = new Map<string, ArchivedSummary[]>();
  for (const c of claimed) {
    const k = JSON.stringify([c.connectionId, c.queue, c.discardJobId]);
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  for (const rows of groups.values()) {
    const { connectionId, queue, discardJobId } = rows[0];
    const settled = new Map<string, RestoreOutcome>();
    try {
      const adapter = adapterFor(connectionId);
      const full = await getArchivedMany(rows.map((r) => r.id));
      const requests = [];
      for (const r of rows) {
        const f = full.get(r.id);
        if (f) requests.push({ id: r.id, envelope: openEnvelope(f), body: openPayload(f) });
      }
      const byId = new Map(rows.map((r) => [r.id, r]));
      // Letters of this discard whose removal the broker may not have taken (connection broken
      // right after the acks) can still be in the DLQ: those copies go first, or the undo makes two.
      if (adapter.capabilities.removalUnconfirmed) {
        await removeDiscardLeftovers(
          db,
          adapter,
          { connectionId, queue },
          { actor: auditActor(actor), by: `undo ${operationId}`, jobIds: [discardJobId] },
        );
      }
      for await (const res of adapter.republish(queue, requests, { operationId: discardJobId })) {
        const r = byId.get(res.id);
        if (!r) continue;
        settled.set(r.id, {
          id: r.id,
          letterId: r.letterId,
          connectionId,
          queue,
          outcome: res.outcome === "published" ? "restored" : "failed",
          newLetterId: res.letterId,
          reason: res.reason,
        });
      }
    } catch (e) {
      const why = asAppError(e)?.userMessage ?? "The letters could not be re-published; the error was logged.";
      if (!asAppError(e)) console.error("[archive] republish failed:", e instanceof Error ? e.name : typeof e);
      for (const r of rows)
        if (!settled.has(r.id))
          settled.set(r.id, {
            id: r.id,
            letterId: r.letterId,
            connectionId,
            queue,
            outcome: "failed",
            newLetterId: null,
            reason: why,
          });
    }
    for (const r of rows) {
      if (!settled.has(r.id))
        settled.set(r.id, {
          id: r.id,
          letterId: r.letterId,
          connectionId,
          queue,
          outcome: "failed",
          newLetterId: null,
          reason: "The broker did not confirm this letter; it was not put back.",
        });
    }
    const done = [...settled.values()];
    await db.$executeRawUnsafe(
      `UPDATE archived_letters a SET
         restore_state = CASE WHEN u.outcome = 'restored' THEN 'restored' ELSE 'failed' END,
         restored_at = CASE WHEN u.outcome = 'restored' THEN now() ELSE a.restored_at END,
         restored_by_email = CASE WHEN u.outcome = 'restored' THEN $2 ELSE a.restored_by_email END,
         restore_reason = CASE WHEN u.outcome = 'restored' THEN $3 ELSE a.restore_reason END,
         restore_error = CASE WHEN u.outcome = 'restored' THEN NULL ELSE u.reason END
       FROM unnest($1::uuid[], $4::text[], $5::text[]) AS u(id, outcome, reason)
       WHERE a.id = u.id AND a.restore_operation_id = $6::uuid`,
      done.map((o) => o.id),
      actor.email,
      p.reason,
      done.map((o) => o.outcome),
      done.map((o) => o.reason),
      operationId,
    );
    // Letters back under their old id (RabbitMQ, Kafka) are live in the triage index again at once;
    // a letter with a new id (SQS) is indexed by the next scan.
    const back = done.filter((o) => o.outcome === "restored").map((o) => o.newLetterId ?? o.letterId);
    if (back.length) {
      await db.$executeRawUnsafe(
        `UPDATE triage_letters SET gone_at = NULL, handled_outcome = NULL WHERE connection_id = $1 AND queue = $2 AND letter_id = ANY($3::text[])`,
        connectionId,
        queue,
        back,
      );
    }
    outcomes.push(...done);
  }

  const result: RestoreResult = {
    operationId,
    restored: outcomes.filter((o) => o.outcome === "restored").length,
    failed: outcomes.filter((o) => o.outcome === "failed").length,
    skipped: outcomes.filter((o) => o.outcome === "skipped").length,
    outcomes,
  };
  const entries: AuditEntry[] = [
    undoEntry(
      actor,
      meta,
      operationId,
      outcomes.filter((o) => o.connectionId),
      "archive.restore",
      result.restored > 0 || outcomes.length === 0 ? "success" : "failure",
      {
        reason: p.reason,
        requested: ids.length,
        restored: result.restored,
        failed: result.failed,
        skipped: result.skipped,
      },
    ),
    ...outcomes.map(
      (o): AuditEntry => ({
        actor: auditActor(actor),
        action: "letter.restore",
        outcome: o.outcome === "restored" ? "success" : "failure",
        operationId,
        scope: "letter",
        connectionId: o.connectionId || null,
        queue: o.queue || null,
        target: o.letterId || o.id,
        requestId: meta.requestId,
        ip: meta.ip,
        details: {
          archiveId: o.id,
          state: o.outcome,
          newLetterId: o.newLetterId,
          reason: o.reason,
          restoreReason: p.reason,
        },
      }),
    ),
  ];
  await recordAuditBatch(entries);
  return result;
}
