import { z } from "zod";
import { JOB_STATES } from "@/lib/jobs/types";
import type { ScanView } from "@/lib/triage/use-cases";
import { defineOperation } from "../registry";

/**
 * Scans: a scan reads a DLQ into the triage index (groups, filters, paging, and the snapshot a
 * DLQ whose reads cost letters is served from). Shapes only: the routes call the triage use cases.
 */

const connectionId = z.string().trim().min(1).max(100);
const queue = z.string().trim().min(1).max(255);

const readLossSchema = z
  .object({
    before: z.number().int().nullable(),
    after: z.number().int().nullable(),
    seen: z.number().int(),
    vanished: z.number().int().nullable().meta({ description: "Letters that left the DLQ during the read." }),
    onwardQueue: z.string().nullable(),
    movedOnward: z.number().int().nullable(),
    limit: z.number().int().nullable(),
    lostByNextRead: z.number().int().nullable().meta({ description: "Letters the next read would lose." }),
  })
  .meta({ id: "ReadLoss", description: "What a read of a DLQ whose reads cost letters cost, measured after it." });

const scanProgressSchema = z
  .looseObject({
    read: z.number().int().optional().meta({ description: "Letters read so far." }),
    total: z.number().int().nullable().optional(),
    rate: z.number().optional().meta({ description: "Letters per second over the current run." }),
    eta: z.number().nullable().optional().meta({ description: "Seconds left, when known." }),
    gone: z.number().int().optional().meta({ description: "Letters of the previous read no longer in the DLQ." }),
    partial: z
      .object({ reason: z.string(), unread: z.number().int().nullable() })
      .nullable()
      .optional()
      .meta({ description: "Set when the scan ended without reading every letter; nothing was then marked gone." }),
    readLoss: readLossSchema.optional(),
  })
  .meta({ id: "ScanProgress" });

export const scanSchema = z
  .object({
    id: z.string(),
    connectionId: z.string(),
    queue: z.string(),
    state: z
      .enum(JOB_STATES)
      .meta({ description: "queued → running → succeeded | failed | cancelled (cancelling while it stops)." }),
    progress: scanProgressSchema,
    error: z.string().nullable().meta({ description: "Why a failed scan failed, in operator words." }),
    acceptRisk: z.boolean().meta({ description: "The scan was started with the DLQ's read risk confirmed." }),
    cancelRequested: z.boolean(),
    createdBy: z.string().nullable().meta({ description: "Id of the user who started it." }),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    heartbeatAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "Scan" });

export const scanIdPathSchema = z.object({ id: z.string().min(1).max(100).meta({ description: "The scan's id." }) });

export const listScansQuerySchema = z.object({
  connectionId: connectionId.optional(),
  queue: queue.optional(),
  cursor: z.string().trim().min(1).max(100).optional().meta({ description: "`nextCursor` of the previous page." }),
  // At most 100: the route reads one more than the page, within listScans' own bound of 200.
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const scanPageSchema = z
  .object({
    items: z.array(scanSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `cursor` for the next (older) page; null on the last." }),
  })
  .meta({ id: "ScanPage" });

export const listScansOperation = defineOperation({
  method: "get",
  tag: "Scans",
  path: "/scans",
  operationId: "listScans",
  summary: "Scans, newest first, by cursor",
  description: "Scans of every DLQ, or of one connection or DLQ. Needs triage:read (every role).",
  problems: [400, 403],
  query: listScansQuerySchema,
  response: scanPageSchema,
});

/** A page of `limit` scans read with one more than asked: the extra one only says there is a next page. */
export function toScanPage(scans: ScanView[], limit: number): z.output<typeof scanPageSchema> {
  const items = scans.slice(0, limit);
  return scanPageSchema.parse({ items, nextCursor: scans.length > limit ? items[items.length - 1].id : null });
}

export const startScanBodySchema = z
  .object({
    connectionId,
    queue,
    acceptRisk: z.boolean().default(false).meta({
      description:
        "Confirms reading a DLQ whose reads cost letters (needs dlq:browse-risky): the scan is then that DLQ's one confirmed read, into the snapshot its letters are served from.",
    }),
  })
  .meta({ id: "StartScan" });

export const startedScanSchema = z
  .object({
    scan: scanSchema,
    alreadyActive: z.boolean().meta({
      description:
        "A scan of this DLQ was already queued or running: it is the one answered (status 200), and no other was started.",
    }),
  })
  .meta({ id: "StartedScan" });

export const startScanOperation = defineOperation({
  method: "post",
  tag: "Scans",
  path: "/scans",
  operationId: "startScan",
  summary: "Start a scan of a DLQ into the triage index",
  description:
    "Queues a scan (202); poll GET /api/v1/scans/{id} until its state is succeeded, failed or cancelled. When one is already queued or running for the DLQ it is answered instead (200, `alreadyActive`). A DLQ whose reads cost letters is 409 `confirmation_required:read` unless `acceptRisk` is true. Needs triage:scan (operators and admins); audited `triage.scan_start`.",
  problems: [400, 403, 404, 409, 503],
  body: startScanBodySchema,
  status: 202,
  otherSuccess: [
    {
      status: 200,
      description:
        "A scan of the DLQ was already queued or running: it is answered (`alreadyActive`), and no other was started.",
    },
  ],
  response: startedScanSchema,
});

export const getScanOperation = defineOperation({
  method: "get",
  tag: "Scans",
  path: "/scans/{id}",
  operationId: "getScan",
  summary: "One scan with its progress",
  description: "Poll it while the scan runs. Needs triage:read (every role).",
  problems: [403, 404],
  params: scanIdPathSchema,
  response: scanSchema,
});

export const cancelScanOperation = defineOperation({
  method: "post",
  tag: "Scans",
  path: "/scans/{id}/cancel",
  operationId: "cancelScan",
  summary: "Cancel a scan",
  description:
    "A queued scan is cancelled at once; a running one stops at its next batch (state cancelling, then cancelled). What it read so far stays in the index. Needs triage:scan (operators and admins); audited `triage.scan_cancel`.",
  problems: [403, 404],
  params: scanIdPathSchema,
  response: scanSchema,
});
