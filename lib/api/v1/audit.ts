import { z } from "zod";
import type { AuditFilter } from "@/lib/audit";
import type { AuditPage } from "@/lib/audit-log/use-cases";
import { AppError, loggableError } from "@/lib/errors";
import { defineOperation } from "../registry";

const text = z.string().trim().min(1).max(200).optional();

export const auditQuerySchema = z.object({
  actor: text.meta({ description: "Actor email, case-insensitive substring." }),
  action: text.meta({ description: "Exact action, or a prefix ending in . or * (auth. or auth.*)." }),
  queue: text,
  connectionId: text,
  outcome: z.enum(["success", "denied", "failure"]).optional(),
  from: z.iso.datetime({ offset: true }).optional().meta({ description: "Rows at or after this instant (ISO 8601)." }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: "Rows at or before this instant (ISO 8601)." }),
  cursor: z.string().trim().min(1).max(100).optional().meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const auditRowSchema = z
  .object({
    id: z.string(),
    at: z.iso.datetime(),
    actorId: z.string().nullable(),
    actorEmail: z.string().nullable(),
    actorRole: z.string().nullable(),
    action: z.string(),
    outcome: z.enum(["success", "denied", "failure"]),
    connectionId: z.string().nullable(),
    queue: z.string().nullable(),
    target: z.string().nullable(),
    requestId: z.string().nullable(),
    ip: z.string().nullable(),
    details: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: "Action-specific; rows of token requests carry tokenId." }),
    hash: z.string(),
  })
  .meta({ id: "AuditRow" });

export const auditPageSchema = z
  .object({
    items: z.array(auditRowSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `cursor` for the next (older) page; null on the last." }),
  })
  .meta({ id: "AuditPage" });

export const listAuditOperation = defineOperation({
  method: "get",
  tag: "Audit",
  path: "/audit",
  operationId: "listAudit",
  summary: "Audit log, newest first, by cursor",
  description:
    "One page of audit rows matching the filter. Needs audit:read (operators and admins); the read is audited audit.view, a refusal audit.view denied.",
  problems: [400, 403],
  query: auditQuerySchema,
  response: auditPageSchema,
});

/** The use case's filter from the filter fields of listAudit's or exportAudit's query. */
export function auditFilterOf(q: Omit<z.output<typeof auditQuerySchema>, "cursor" | "limit">): AuditFilter {
  const f: AuditFilter = {};
  if (q.actor) f.actor = q.actor;
  if (q.action) f.action = q.action;
  if (q.queue) f.queue = q.queue;
  if (q.connectionId) f.connectionId = q.connectionId;
  if (q.outcome) f.outcome = q.outcome;
  if (q.from) f.from = new Date(q.from);
  if (q.to) f.to = new Date(q.to);
  if (f.from && f.to && f.from > f.to)
    throw new AppError("bad_request:query", { userMessage: "`from` is after `to`." });
  return f;
}

export function toAuditPage(page: AuditPage): z.output<typeof auditPageSchema> {
  return auditPageSchema.parse({ items: page.rows, nextCursor: page.nextCursor });
}

/**
 * A row of the export: the page's row plus what a reviewer needs to check the chain offline
 * (prevHash, keyId) and to group a row with its operation. The CSV columns carry the same fields.
 */
export const auditExportRowSchema = auditRowSchema
  .extend({
    operationId: z.string().meta({ description: "Links an action's row with the rows of the letters it affected." }),
    scope: z.string().meta({ description: "The hash chain the row belongs to." }),
    prevHash: z.string().meta({ description: "`hash` of the previous row of the same chain." }),
    keyId: z
      .string()
      .nullable()
      .meta({ description: "The audit key the row's MAC was made with; null on rows written before keys." }),
  })
  .meta({ id: "AuditExportRow" });

export const AUDIT_EXPORT_FORMATS = ["csv", "ndjson", "json"] as const;

export const auditExportQuerySchema = auditQuerySchema.omit({ cursor: true, limit: true }).extend({
  format: z.enum(AUDIT_EXPORT_FORMATS).default("csv").meta({
    description:
      "csv (text/csv, a header line then one row per line), ndjson (application/x-ndjson, one AuditExportRow per line) or json (one array).",
  }),
});

export const exportAuditOperation = defineOperation({
  method: "get",
  tag: "Audit",
  path: "/audit/export",
  operationId: "exportAudit",
  summary: "The whole filtered audit log, streamed as CSV, NDJSON or JSON",
  description:
    "Every audit row matching the filter (the filters of listAudit), newest first, streamed as it is read: no paging, and the server holds only a batch at a time, " +
    "so an export of any size is one request. Needs audit:read (operators and admins); the export is audited audit.export with its filter, a refusal audit.export denied. " +
    "With format=ndjson each line is one AuditExportRow; with format=csv the columns are the AuditExportRow fields, `details` as JSON text, and a cell that a " +
    "spreadsheet would run as a formula starts with a single quote.",
  problems: [400, 403],
  query: auditExportQuerySchema,
  response: z.array(auditExportRowSchema).meta({ id: "AuditExport" }),
  alsoAs: {
    "text/csv": z.string().meta({
      description:
        "CSV (RFC 4180, CRLF lines): a header line of the AuditExportRow field names, then one line per row.",
    }),
    "application/x-ndjson": auditExportRowSchema,
  },
});

/** The rows of the JSON and NDJSON exports in their documented shape (the CSV writes the same fields), one at a time. */
export async function* toAuditExportRows(
  rows: AsyncIterable<unknown>,
): AsyncGenerator<z.output<typeof auditExportRowSchema>> {
  for await (const row of rows) yield auditExportRowSchema.parse(row);
}

/**
 * Newline-delimited JSON, one row per line, pulled batch by batch as the client reads: memory
 * stays bounded whatever the export's size, and a client that stops reading stops the query.
 */
export function ndjsonResponse(
  rows: AsyncIterable<unknown>,
  o: { filenamePrefix: string; batchSize?: number },
): Response {
  const size = o.batchSize ?? 200;
  const iterator = rows[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        let text = "";
        for (let n = 0; n < size; n++) {
          const next = await iterator.next();
          if (next.done) {
            if (text) controller.enqueue(encoder.encode(text));
            controller.close();
            return;
          }
          text += `${JSON.stringify(next.value)}\n`;
        }
        controller.enqueue(encoder.encode(text));
      } catch (e) {
        // Never the message: it can quote row content.
        console.error("ndjson export failed mid-stream:", loggableError(e));
        controller.error(e);
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(body, {
    headers: {
      "Content-Type": "application/x-ndjson; charset=utf-8",
      "Content-Disposition": `attachment; filename="${o.filenamePrefix}-${stamp}.ndjson"`,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-store",
    },
  });
}
