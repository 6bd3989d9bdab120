import { z } from "zod";
import { DISCARD_STATES } from "@/lib/discard/ledger";
import { discardPreviewSchema, discardStartSchema } from "@/lib/discard/plan";
import { JOB_STATES } from "@/lib/jobs/types";
import { defineOperation } from "../registry";
import { jobIdParams, ledgerJobDetailOf, ledgerJobListOperation, ledgerPageQuerySchema } from "./ledger-jobs";
import { planCountFields, selectionRequestFields, v1SelectionSchema } from "./selection";

/**
 * The discard operations of /api/v1: the use case's own request schemas (lib/discard/plan.ts) with
 * descriptions, the same selection as a redrive's, and the same two-step count confirmation.
 */

export const discardPlanRequestSchema = discardPreviewSchema
  .extend(selectionRequestFields(discardPreviewSchema.shape))
  .meta({ id: "DiscardPlanRequest" });

const s = discardStartSchema.shape;
export const discardStartRequestSchema = discardPlanRequestSchema
  .extend({
    reason: s.reason.meta({
      description: "Why these letters are discarded (3 to 2000 characters); recorded with every letter's archive row.",
    }),
    confirmedCount: s.confirmedCount.meta({
      description:
        "The `count` of the plan you reviewed. If the selection holds another number now, nothing is discarded: 409 `conflict:count`, the detail names the new count.",
    }),
    acceptRisk: s.acceptRisk.meta({
      description: "Read a DLQ whose reading can cost letters; needs dlq:browse-risky.",
    }),
  })
  .meta({ id: "DiscardStartRequest" });

export const discardPreviewResponseSchema = z
  .object({
    ...planCountFields(),
    warnings: z
      .array(z.string())
      .meta({ description: "How long the archive keeps what is discarded, what an undo would keep, read risks." }),
  })
  .meta({ id: "DiscardPreview" });

export const discardSchema = z
  .object({
    id: z.string().meta({ description: "The discard's id (its job id, and the operation id of its audit rows)." }),
    connectionId: z.string(),
    queue: z.string(),
    state: z
      .enum(JOB_STATES)
      .meta({ description: "queued → running → succeeded; or cancelling → cancelled, or failed." }),
    progress: z.record(z.string(), z.unknown()).meta({
      description:
        "total, pending, discarded, failed, read, …; once the discard has ended, `result`: `{ complete, left, summary }` (complete only when every selected letter was discarded; otherwise `summary` says what is left).",
    }),
    error: z.string().nullable(),
    cancelRequested: z.boolean(),
    selection: v1SelectionSchema,
    reason: z.string(),
    total: z.number().int(),
    createdBy: z.string().nullable(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "Discard" });

export const discardLedgerRowSchema = z
  .object({
    seq: z.number().int(),
    letterId: z.string(),
    sha256: z.string().meta({ description: "The payload's SHA-256 as your role may see it." }),
    messageId: z.string().nullable(),
    state: z.enum(DISCARD_STATES),
    attempts: z.number().int(),
    reason: z.string().nullable(),
    archiveId: z.string().nullable().meta({ description: "The letter's archive row (GET the archive to see it)." }),
    discardedAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "DiscardLedgerRow" });

export const discardDetailSchema = ledgerJobDetailOf({
  key: "discard",
  job: discardSchema,
  row: discardLedgerRowSchema,
  id: "DiscardDetail",
  counts: "Letters per ledger state.",
});

const idParams = jobIdParams("discard");

export const planDiscardOperation = defineOperation({
  method: "post",
  tag: "Discard",
  path: "/discards/plan",
  operationId: "planDiscard",
  summary: "Plan a discard: the exact count and scope",
  description:
    "Counts the selection in the triage index as your role sees it. Removes nothing. The answer's `count` is what POST /api/v1/discards needs as `confirmedCount`. Needs discard:run (admins); audited `discard.plan`.",
  problems: [400, 403, 404, 503],
  body: discardPlanRequestSchema,
  response: discardPreviewResponseSchema,
});

export const startDiscardOperation = defineOperation({
  method: "post",
  tag: "Discard",
  path: "/discards",
  operationId: "startDiscard",
  summary: "Start a discard with the confirmed count and a reason",
  description: [
    "Two steps: POST /api/v1/discards/plan, then start with the same selection, `confirmedCount` = the plan's count and a `reason`. A changed count is 409 `conflict:count` (the detail names it) and nothing is discarded.",
    "Each letter is archived (payload and metadata, with the reason) before the broker removes it. Answers 202 with the discard; poll GET /api/v1/discards/{id} until state `succeeded`.",
    "Needs discard:run (admins); audited `discard.start`; operation id = the discard's id.",
  ].join("\n\n"),
  problems: [400, 403, 404, 409, 503],
  body: discardStartRequestSchema,
  status: 202,
  response: discardSchema,
});

export const listDiscardsOperation = ledgerJobListOperation({
  tag: "Discard",
  noun: "discards",
  description: "Needs discard:read (every role); a refusal is audited `discard.list`.",
  item: discardSchema,
  pageId: "DiscardPage",
});

export const getDiscardQuerySchema = ledgerPageQuerySchema(DISCARD_STATES, {
  after: "`nextAfter` of the previous answer.",
});

export const getDiscardOperation = defineOperation({
  method: "get",
  tag: "Discard",
  path: "/discards/{id}",
  operationId: "getDiscard",
  summary: "One discard with counts and a ledger page",
  description:
    "Poll `discard.state` and `discard.progress`. Needs discard:read (every role); a refusal is audited `discard.view`.",
  problems: [400, 403, 404],
  params: idParams,
  query: getDiscardQuerySchema,
  response: discardDetailSchema,
});

export const cancelDiscardOperation = defineOperation({
  method: "post",
  tag: "Discard",
  path: "/discards/{id}/cancel",
  operationId: "cancelDiscard",
  summary: "Cancel a discard",
  description:
    "Queued: cancelled at once; running: `cancelling`, then `cancelled` at its next batch. Letters not yet discarded stay in the DLQ. No body is read. Needs discard:run (admins); audited `discard.cancel`.",
  problems: [403, 404],
  params: idParams,
  response: discardSchema,
});

/** A use case's view as this API's schema reads it (see asRedrive); the operation parses it again. */
export const asDiscard = (v: unknown) => v as z.input<typeof discardSchema>;
export const asDiscardDetail = (v: unknown) => v as z.input<typeof discardDetailSchema>;
