import "server-only";
import { z } from "zod";
import {
  distinctAuditActions,
  queryAudit,
  streamAudit,
  verifyAuditChain,
  type AuditFilter,
  type AuditRow,
} from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { crossDlqDigest, KEYED_DIGEST_PREFIX } from "@/lib/masking/digest";
import { recordOutcome } from "@/lib/use-case/audited";
import { auditCategoryOf, parseAuditCategories, type AuditCategory } from "./categories";

const optionalText = z
  .string()
  .trim()
  .max(200)
  .optional()
  .transform((v) => (v ? v : undefined));

const optionalDate = z
  .string()
  .trim()
  .max(40)
  .optional()
  .transform((v, ctx) => {
    if (!v) return undefined;
    const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : /Z|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`);
    if (Number.isNaN(d.getTime())) {
      ctx.addIssue({ code: "custom", message: `"${v}" is not a date; use YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)` });
      return z.NEVER;
    }
    return d;
  });

/** The audit filter as it appears in URLs (`/audit?...`, `/api/audit/export?...`). Times are UTC. */
export const auditFilterSchema = z.object({
  actor: optionalText,
  action: optionalText,
  queue: optionalText,
  connectionId: optionalText,
  outcome: z
    .enum(["success", "denied", "failure", ""])
    .optional()
    .transform((v) => (v ? v : undefined)),
  from: optionalDate,
  to: optionalDate,
});

/**
 * The audit filter of the page and the export: the log's own filter, plus the categories an entry's
 * action must fall in (absent: every category). An explicit action wins over the categories.
 */
export type AuditLogFilter = Omit<AuditFilter, "actions"> & { categories?: AuditCategory[] };

/**
 * Parses URL search params into a filter; bad input is `bad_request:filter` with the reason.
 * `category` ("operations,administration", "access", "all") applies only without an action; when
 * it is absent, `defaultCategories` says whether the page's default (operations and
 * administration) applies: the page's yes, an export link (which names its category) no.
 */
export function parseAuditFilter(
  params: Record<string, string | string[] | undefined> | URLSearchParams,
  options: { defaultCategories?: boolean } = {},
): AuditLogFilter {
  const obj: Record<string, string | undefined> = {};
  for (const key of ["actor", "action", "queue", "connectionId", "outcome", "from", "to", "category"]) {
    const v = params instanceof URLSearchParams ? (params.get(key) ?? undefined) : params[key];
    obj[key] = Array.isArray(v) ? v[0] : v;
  }
  const { category, ...fields } = obj;
  const parsed = auditFilterSchema.safeParse(fields);
  if (!parsed.success) {
    throw new AppError("bad_request:filter", {
      userMessage: `The filter is not valid: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    });
  }
  const filter = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)) as AuditLogFilter;
  if (!filter.action && (category?.trim() || options.defaultCategories)) {
    const categories = parseAuditCategories(category);
    if (categories !== "all") filter.categories = categories;
  }
  return filter;
}

/** The log's filter: categories become the actions of theirs that the log holds (`held`). */
function logFilter(f: AuditLogFilter, held: string[]): AuditFilter {
  const { categories, ...rest } = f;
  if (!categories) return rest;
  return { ...rest, actions: held.filter((a) => categories.includes(auditCategoryOf(a))) };
}

function filterDetails(f: AuditLogFilter): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(f)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]),
  );
}

export interface AuditPage {
  rows: AuditRow[];
  nextCursor: string | null;
  /** Every action the log holds, for the action list. */
  actions: string[];
}

export const AUDIT_PAGE_SIZE = 100;

/** One page of audit history, newest first. Needs audit:read; audited `audit.view`. */
export async function viewAudit(
  actor: Actor,
  meta: RequestMeta,
  input: { filter: AuditLogFilter; before?: string; limit?: number },
): Promise<AuditPage> {
  await authorize(actor, "audit:read", { action: "audit.view", meta });
  const limit = Math.min(Math.max(1, input.limit ?? AUDIT_PAGE_SIZE), 500);
  const actions = await distinctAuditActions();
  const page = await queryAudit(logFilter(input.filter, actions), { before: input.before || undefined, limit });
  await recordOutcome(actor, meta, { action: "audit.view" }, "success", {
    filter: filterDetails(input.filter),
    before: input.before ?? null,
    rows: page.rows.length,
  });
  const digest = await crossDlqDigest(actor.role);
  return { ...page, actions, rows: page.rows.map((r) => withVisibleDigest(r, digest.show)) };
}

/**
 * Per-letter rows record the payload's SHA-256 (`details.sha256`; a repaired letter also the
 * copy's, `details.afterSha256`): a reader is shown the digest its role may see, like everywhere
 * else (lib/masking/digest.ts), so a raw digest cannot confirm a guess of a masked value. The stored
 * row, and so the hash chain, are untouched; verification reads the table itself.
 */
const DIGEST_FIELDS = ["sha256", "afterSha256"] as const;
function withVisibleDigest(r: AuditRow, show: (sha256: string) => string): AuditRow {
  if (!r.details) return r;
  let details: Record<string, unknown> | null = null;
  for (const key of DIGEST_FIELDS) {
    const sha = r.details[key];
    if (typeof sha === "string" && sha && !sha.startsWith(KEYED_DIGEST_PREFIX)) {
      details ??= { ...r.details };
      details[key] = show(sha);
    }
  }
  return details ? { ...r, details } : r;
}

/**
 * All audit rows matching the filter, streamed in batches (bounded memory). Needs audit:read;
 * audited `audit.export` before the first row is produced.
 */
export async function exportAudit(
  actor: Actor,
  meta: RequestMeta,
  input: { filter: AuditLogFilter; format: "csv" | "json" | "ndjson" },
): Promise<AsyncIterable<AuditRow>> {
  await authorize(actor, "audit:read", { action: "audit.export", meta });
  await recordOutcome(actor, meta, { action: "audit.export" }, "success", {
    format: input.format,
    filter: filterDetails(input.filter),
  });
  const digest = await crossDlqDigest(actor.role);
  const filter = logFilter(input.filter, input.filter.categories ? await distinctAuditActions() : []);
  return (async function* () {
    for await (const r of streamAudit(filter, 500)) yield withVisibleDigest(r, digest.show);
  })();
}

/** Recomputes the audit hash chain. Needs audit:verify; audited `audit.verify` with the result. */
export async function verifyAudit(actor: Actor, meta: RequestMeta) {
  await authorize(actor, "audit:verify", { action: "audit.verify", meta });
  const result = await verifyAuditChain();
  await recordOutcome(actor, meta, { action: "audit.verify" }, "success", {
    result: result as unknown as Record<string, unknown>,
  });
  return result;
}
