import "server-only";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { recordAudit, recordAuditBatch, type AuditEntry } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { DeathRecord, FailureInfo, HeaderEntry } from "@/lib/brokers/types";
import { audited, auditActor } from "@/lib/dlq/audit-trail";
import { adapterFor } from "@/lib/dlq/connection";
import { maskedPayloadView, maskLetterMeta } from "@/lib/dlq/mask-letter";
import type { PayloadView } from "@/lib/dlq/payload-view";
import { getDb } from "@/lib/db";
import { removeDiscardLeftovers } from "@/lib/discard/leftovers";
import { AppError, asAppError } from "@/lib/errors";
import { maskHeadersWithRules, maskPayloadWithRules } from "@/lib/masking/engine";
import { maskingPolicy, type MaskingPolicy } from "@/lib/masking/policy";
import { crossDlqDigest, visibleSha256 } from "@/lib/masking/digest";
import { countArchive, getArchived, getArchivedMany, queryArchive, streamArchive, toSummary, SUMMARY_COLUMNS, type ArchivedSummary, type ArchiveFilter } from "./queries";
import { openEnvelope, openPayload } from "./store";

/**
 * Archive use cases: list, one archived letter (masked as on the letter page), export, and undo
 * (re-publish to the DLQ). authorize → validate → act → audit, like every use case.
 */

const PAYLOAD_VIEW_BYTES = 256 * 1024;

/** A restore claim older than this is taken to belong to a process that died (the row can be restored again). */
const STALE_RESTORE_MINUTES = 10;

export async function listArchive(actor: Actor, meta: RequestMeta, input: { filter: ArchiveFilter; after?: string | null; limit?: number }): Promise<{ rows: ArchivedSummary[]; count: number; nextCursor: string | null }> {
  await authorize(actor, "archive:read", { action: "archive.list", connectionId: input.filter.connectionId ?? null, queue: input.filter.queue ?? null, meta });
  const filter = await digestScoped(actor, input.filter);
  const [page, count] = await Promise.all([queryArchive(filter, { after: input.after, limit: input.limit }), countArchive(filter)]);
  const policyOf = policyCache(actor);
  const rows = await Promise.all(page.rows.map(async (r) => ({ ...r, sha256: visibleSha256(r.sha256, await policyOf(r.connectionId, r.queue)) })));
  return { ...page, rows, count };
}

/**
 * The archive spans DLQs with different masking, so its search matches the raw SHA-256 only for a
 * role that sees every payload's bytes; any other role matches the keyed digest it is shown.
 */
async function digestScoped(actor: Actor, filter: ArchiveFilter): Promise<ArchiveFilter> {
  return { ...filter, digest: (await crossDlqDigest(actor.role)).raw ? "raw" : "keyed" };
}

/** One masking policy per DLQ for the length of a request. */
function policyCache(actor: Actor): (connectionId: string, queue: string) => Promise<MaskingPolicy> {
  const policies = new Map<string, Promise<MaskingPolicy>>();
  return (c, q) => {
    const k = JSON.stringify([c, q]);
    if (!policies.has(k)) policies.set(k, maskingPolicy(actor.role, c, q));
    return policies.get(k)!;
  };
}

export interface ArchivedLetterDetail extends ArchivedSummary {
  correlationId: string | null;
  contentEncoding: string | null;
  orderingKey: string | null;
  headers: HeaderEntry[];
  properties: HeaderEntry[];
  failure: FailureInfo;
  history: DeathRecord[];
  /** Null when the role may not see payloads of this DLQ (viewers on a sensitive DLQ). Masked on the server. */
  payload: PayloadView | null;
  masking: { payloadMasked: boolean; maskedCount: number; sensitive: boolean };
  /** What putting this letter back does not keep, in the broker's words (empty when the connection is gone from config). */
  republishLimits: string[];
}

/** One archived letter with the letter page's masking rules. Audited `archive.view`. */
export async function viewArchived(actor: Actor, meta: RequestMeta, input: { id: string }): Promise<ArchivedLetterDetail> {
  const scope = { action: "archive.view", target: typeof input?.id === "string" ? input.id : null };
  await authorize(actor, "archive:read", { ...scope, meta });
  const row = await getArchived(String(input?.id ?? ""));
  if (!row) throw new AppError("not_found:archive", { userMessage: "There is no such archived letter (it may have expired)." });
  const policy = await maskingPolicy(actor.role, row.connectionId, row.queue);
  const showPayload = can(actor.role, "letter:view-payload") && policy.payload !== "none";
  return audited(
    actor,
    meta,
    { ...scope, connectionId: row.connectionId, queue: row.queue },
    async () => {
      const m = row.metadata as { correlationId?: string | null; contentEncoding?: string | null; orderingKey?: string | null; headers?: HeaderEntry[]; properties?: HeaderEntry[]; failure: FailureInfo; history?: DeathRecord[] };
      const masked = maskLetterMeta({ headers: m.headers ?? [], properties: m.properties ?? [], failure: m.failure, history: m.history ?? [] }, policy);
      let shown: ReturnType<typeof maskedPayloadView> | null = null;
      if (showPayload) {
        const body = openPayload(row);
        const cut = body.length > PAYLOAD_VIEW_BYTES;
        shown = maskedPayloadView(cut ? body.subarray(0, PAYLOAD_VIEW_BYTES) : body, { truncated: cut, contentType: row.contentType }, policy);
      }
      const { metadata: _m, payloadCiphertext: _p, payloadKeyId: _k, envelopeCiphertext: _e, envelopeKeyId: _ek, ...summary } = row;
      return {
        ...summary,
        sha256: visibleSha256(summary.sha256, policy),
        correlationId: m.correlationId ?? null,
        contentEncoding: m.contentEncoding ?? null,
        orderingKey: m.orderingKey ?? null,
        headers: masked.headers,
        properties: masked.properties,
        failure: masked.failure,
        history: masked.history,
        payload: shown?.view ?? null,
        masking: { payloadMasked: shown?.masked ?? false, maskedCount: masked.maskedCount + (shown?.maskedCount ?? 0), sensitive: policy.sensitive },
        republishLimits: limitsOf(row.connectionId),
      };
    },
    (r) => ({ payloadShown: r.payload !== null, masked: r.masking.maskedCount, sensitive: r.masking.sensitive }),
  );
}

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
async function auditAttempt(actor: Actor, meta: RequestMeta, operationId: string, reason: string, requested: number, claimed: ArchivedSummary[]) {
  if (claimed.length === 0) return;
  try {
    await recordAudit(
      undoEntry(actor, meta, operationId, claimed, "archive.restore_started", "success", { reason, requested, claimed: claimed.length, archiveIds: claimed.map((c) => c.id) }),
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

function limitsOf(connectionId: string): string[] {
  try {
    return adapterFor(connectionId).capabilities.republishLimits ?? [];
  } catch {
    return [];
  }
}

export type ExportedArchived = ArchivedSummary & { headers: HeaderEntry[]; payloadText?: string | null; payloadBase64?: string | null };

/**
 * The filtered archive as rows for a streamed export. Headers pass through the role's masking
 * rules; payloads only with `letter:read-payload`, and then as original bytes only where no rule
 * applies to the role, else as masked text. Audited `archive.export` with the filter and count.
 */
export async function exportArchive(actor: Actor, meta: RequestMeta, input: { filter: ArchiveFilter; format: "csv" | "json"; includePayload?: boolean }): Promise<{ count: number; rows: AsyncIterable<ExportedArchived> }> {
  const scope = { action: "archive.export", connectionId: input.filter.connectionId ?? null, queue: input.filter.queue ?? null };
  await authorize(actor, "archive:read", { ...scope, meta });
  if (input.includePayload) await authorize(actor, "letter:read-payload", { ...scope, meta });
  const filter = await digestScoped(actor, input.filter);
  const count = await audited(actor, meta, scope, () => countArchive(filter), (n) => ({ format: input.format, includePayload: Boolean(input.includePayload), count: n, filter: describeFilter(filter) }));
  const policyOf = policyCache(actor);
  async function* rows(): AsyncGenerator<ExportedArchived> {
    for await (const r of streamArchive(filter, { withSealed: Boolean(input.includePayload) })) {
      const policy = await policyOf(r.connectionId, r.queue);
      const { metadata, payloadCiphertext, payloadKeyId, ...unkeyed } = r;
      const summary = { ...unkeyed, sha256: visibleSha256(unkeyed.sha256, policy) };
      const headers = maskHeadersWithRules(((metadata.headers as HeaderEntry[]) ?? []), policy.rules, policy.hashKey).entries;
      if (!input.includePayload) {
        yield { ...summary, headers };
        continue;
      }
      let payloadText: string | null = null;
      let payloadBase64: string | null = null;
      if (policy.payload !== "none" && payloadCiphertext && payloadKeyId) {
        const body = openPayload({ ...r, payloadCiphertext, payloadKeyId });
        if (policy.rules.length === 0) {
          payloadBase64 = body.toString("base64");
          const t = body.toString("utf8");
          payloadText = Buffer.from(t, "utf8").equals(body) ? t : null;
        } else {
          payloadText = maskPayloadWithRules(body, r.contentType, policy.rules, policy.hashKey, { maxChars: 4 * 1024 * 1024 }).text ?? null;
        }
      }
      yield { ...summary, headers, payloadText, payloadBase64 };
    }
  }
  return { count, rows: rows() };
}

function describeFilter(f: ArchiveFilter): Record<string, unknown> {
  return {
    connectionId: f.connectionId ?? null,
    queue: f.queue ?? null,
    from: f.from?.toISOString() ?? null,
    to: f.to?.toISOString() ?? null,
    actor: f.actor ?? null,
    reason: f.reason ?? null,
    state: f.state ?? null,
    text: f.text ?? null,
    ids: f.ids?.length ?? null,
  };
}

const restoreSchema = z.object({
  ids: z.array(z.string().uuid()).min(1, "Choose at least one archived letter.").max(500, "Undo at most 500 letters at a time."),
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
    const rows = (await db.$queryRawUnsafe<Array<Record<string, unknown>>>(`SELECT ${SUMMARY_COLUMNS} FROM archived_letters WHERE id = ANY($1::uuid[])`, others)).map(toSummary);
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
        reason: !r ? "Not in the archive (expired, or never there)." : r.restoreState === "restored" ? `Already put back ${r.restoredAt} by ${r.restoredBy ?? "someone"}.` : "Another undo of this letter is in progress.",
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
        await removeDiscardLeftovers(db, adapter, { connectionId, queue }, { actor: auditActor(actor), by: `undo ${operationId}`, jobIds: [discardJobId] });
      }
      for await (const res of adapter.republish(queue, requests, { operationId: discardJobId })) {
        const r = byId.get(res.id);
        if (!r) continue;
        settled.set(r.id, { id: r.id, letterId: r.letterId, connectionId, queue, outcome: res.outcome === "published" ? "restored" : "failed", newLetterId: res.letterId, reason: res.reason });
      }
    } catch (e) {
      const why = asAppError(e)?.userMessage ?? "The letters could not be re-published; the error was logged.";
      if (!asAppError(e)) console.error("[archive] republish failed:", e instanceof Error ? e.name : typeof e);
      for (const r of rows) if (!settled.has(r.id)) settled.set(r.id, { id: r.id, letterId: r.letterId, connectionId, queue, outcome: "failed", newLetterId: null, reason: why });
    }
    for (const r of rows) {
      if (!settled.has(r.id)) settled.set(r.id, { id: r.id, letterId: r.letterId, connectionId, queue, outcome: "failed", newLetterId: null, reason: "The broker did not confirm this letter; it was not put back." });
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
    undoEntry(actor, meta, operationId, outcomes.filter((o) => o.connectionId), "archive.restore", result.restored > 0 || outcomes.length === 0 ? "success" : "failure", {
      reason: p.reason,
      requested: ids.length,
      restored: result.restored,
      failed: result.failed,
      skipped: result.skipped,
    }),
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
        details: { archiveId: o.id, state: o.outcome, newLetterId: o.newLetterId, reason: o.reason, restoreReason: p.reason },
      }),
    ),
  ];
  await recordAuditBatch(entries);
  return result;
}
