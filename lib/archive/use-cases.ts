import "server-only";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { DeathRecord, FailureInfo, HeaderEntry } from "@/lib/brokers/contract/letter";
import { audited } from "@/lib/use-case/audited";
import { adapterFor } from "@/lib/use-case/connection";
import { maskedByRule, maskedPayloadView, maskLetterMeta, type LetterMaskingSummary } from "@/lib/letter/mask-letter";
import type { PayloadView } from "@/lib/letter/payload-view";
import { AppError } from "@/lib/errors";
import { maskHeadersWithRules, maskPayloadWithRules } from "@/lib/masking/engine";
import { maskingPolicy, type MaskingPolicy } from "@/lib/masking/policy";
import { crossDlqDigest, visibleSha256 } from "@/lib/masking/digest";
import {
  archiveDlqs,
  countArchive,
  getArchived,
  queryArchive,
  streamArchive,
  type ArchiveDlq,
  type ArchivedSummary,
  type ArchiveFilter,
} from "./queries";
import { openPayload } from "./store";

/**
 * Archive use cases: list, one archived letter (masked as on the letter page), export. The undo
 * (re-publish to the DLQ) is the discard's: lib/discard/undo.ts. authorize → validate → act →
 * audit, like every use case.
 */

const PAYLOAD_VIEW_BYTES = 256 * 1024;

export async function listArchive(
  actor: Actor,
  meta: RequestMeta,
  input: { filter: ArchiveFilter; after?: string | null; limit?: number },
): Promise<{ rows: ArchivedSummary[]; count: number; nextCursor: string | null; dlqs: ArchiveDlq[] }> {
  await authorize(actor, "archive:read", {
    action: "archive.list",
    connectionId: input.filter.connectionId ?? null,
    queue: input.filter.queue ?? null,
    meta,
  });
  const filter = await digestScoped(actor, input.filter);
  const [page, count, dlqs] = await Promise.all([
    queryArchive(filter, { after: input.after, limit: input.limit }),
    countArchive(filter),
    archiveDlqs(),
  ]);
  const policyOf = policyCache(actor);
  const rows = await Promise.all(
    page.rows.map(async (r) => ({ ...r, sha256: visibleSha256(r.sha256, await policyOf(r.connectionId, r.queue)) })),
  );
  return { ...page, rows, count, dlqs };
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
  /** As on the letter page: how many values were masked, how many in the payload view, and by which rules. */
  masking: LetterMaskingSummary;
  /** What putting this letter back does not keep, in the broker's words (empty when the connection is gone from config). */
  republishLimits: string[];
}

/** One archived letter with the letter page's masking rules. Audited `archive.view`. */
export async function viewArchived(
  actor: Actor,
  meta: RequestMeta,
  input: { id: string },
): Promise<ArchivedLetterDetail> {
  const scope = { action: "archive.view", target: typeof input?.id === "string" ? input.id : null };
  await authorize(actor, "archive:read", { ...scope, meta });
  const row = await getArchived(String(input?.id ?? ""));
  if (!row)
    throw new AppError("not_found:archive", { userMessage: "There is no such archived letter (it may have expired)." });
  const policy = await maskingPolicy(actor.role, row.connectionId, row.queue);
  const showPayload = can(actor.role, "letter:view-payload") && policy.payload !== "none";
  return audited(
    actor,
    meta,
    { ...scope, connectionId: row.connectionId, queue: row.queue },
    async () => {
      const m = row.metadata as {
        correlationId?: string | null;
        contentEncoding?: string | null;
        orderingKey?: string | null;
        headers?: HeaderEntry[];
        properties?: HeaderEntry[];
        failure: FailureInfo;
        history?: DeathRecord[];
      };
      const meta = {
        headers: m.headers ?? [],
        properties: m.properties ?? [],
        failure: m.failure,
        history: m.history ?? [],
      };
      const masked = maskLetterMeta(meta, policy);
      let shown: ReturnType<typeof maskedPayloadView> | null = null;
      let viewed: Uint8Array | null = null;
      const opts = { truncated: false, contentType: row.contentType, contentEncoding: m.contentEncoding ?? null };
      if (showPayload) {
        const body = openPayload(row);
        opts.truncated = body.length > PAYLOAD_VIEW_BYTES;
        viewed = opts.truncated ? body.subarray(0, PAYLOAD_VIEW_BYTES) : body;
        shown = maskedPayloadView(viewed, opts, policy);
      }
      const total = masked.maskedCount + (shown?.maskedCount ?? 0);
      const {
        metadata: _m,
        payloadCiphertext: _p,
        payloadKeyId: _k,
        envelopeCiphertext: _e,
        envelopeKeyId: _ek,
        ...summary
      } = row;
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
        masking: {
          payloadMasked: shown?.masked ?? false,
          maskedCount: total,
          sensitive: policy.sensitive,
          payloadMaskedCount: shown?.maskedCount ?? 0,
          byRule: total > 0 ? maskedByRule(meta, viewed, opts, policy) : [],
        },
        republishLimits: limitsOf(row.connectionId),
      };
    },
    (r) => ({ payloadShown: r.payload !== null, masked: r.masking.maskedCount, sensitive: r.masking.sensitive }),
  );
}

function limitsOf(connectionId: string): string[] {
  try {
    return adapterFor(connectionId).capabilities.republishLimits ?? [];
  } catch {
    return [];
  }
}

export type ExportedArchived = ArchivedSummary & {
  headers: HeaderEntry[];
  payloadText?: string | null;
  payloadBase64?: string | null;
};

/**
 * The filtered archive as rows for a streamed export. Headers pass through the role's masking
 * rules; payloads only with `letter:read-payload`, and then as original bytes only where no rule
 * applies to the role, else as masked text. Audited `archive.export` with the filter and count.
 */
export async function exportArchive(
  actor: Actor,
  meta: RequestMeta,
  input: { filter: ArchiveFilter; format: "csv" | "json"; includePayload?: boolean },
): Promise<{ count: number; rows: AsyncIterable<ExportedArchived> }> {
  const scope = {
    action: "archive.export",
    connectionId: input.filter.connectionId ?? null,
    queue: input.filter.queue ?? null,
  };
  await authorize(actor, "archive:read", { ...scope, meta });
  if (input.includePayload) await authorize(actor, "letter:read-payload", { ...scope, meta });
  const filter = await digestScoped(actor, input.filter);
  const count = await audited(
    actor,
    meta,
    scope,
    () => countArchive(filter),
    (n) => ({
      format: input.format,
      includePayload: Boolean(input.includePayload),
      count: n,
      filter: describeFilter(filter),
    }),
  );
  const policyOf = policyCache(actor);
  async function* rows(): AsyncGenerator<ExportedArchived> {
    for await (const r of streamArchive(filter, { withSealed: Boolean(input.includePayload) })) {
      const policy = await policyOf(r.connectionId, r.queue);
      const { metadata, payloadCiphertext, payloadKeyId, ...unkeyed } = r;
      const summary = { ...unkeyed, sha256: visibleSha256(unkeyed.sha256, policy) };
      const headers = maskHeadersWithRules(
        (metadata.headers as HeaderEntry[]) ?? [],
        policy.rules,
        policy.hashKey,
      ).entries;
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
          payloadText =
            maskPayloadWithRules(body, r.contentType, policy.rules, policy.hashKey, { maxChars: 4 * 1024 * 1024 })
              .text ?? null;
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
    operation: f.operation ?? null,
    ids: f.ids?.length ?? null,
  };
}
