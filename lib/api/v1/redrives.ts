import { z } from "zod";
import { JOB_STATES } from "@/lib/jobs/types";
import {
  DEFAULTS,
  LEDGER_STATES,
  parkingSchema,
  planSchema,
  previewSchema,
  sampleSchema,
  targetSchema,
} from "@/lib/redrive/plan";
import { defineOperation } from "../registry";
import { jobIdParams, ledgerJobDetailOf, ledgerJobListOperation, ledgerPageQuerySchema } from "./ledger-jobs";
import { planCountFields, selectionRequestFields, v1SelectionSchema } from "./selection";

/**
 * The redrive operations of /api/v1. The request schemas are the use case's own (lib/redrive/plan.ts)
 * with descriptions added, so the document, the route's parse and the use case's parse cannot
 * disagree; the use case parses again and decides.
 */

const v1TargetSchema = z
  .discriminatedUnion("kind", [
    targetSchema.options[0].meta({
      description:
        "Back to each letter's origin (its source queue, or the exchange and routing keys it was dead-lettered from).",
    }),
    targetSchema.options[1].meta({ description: "A named queue (topic) on the same connection." }),
  ])
  .meta({ id: "RedriveTarget", description: "Where the letters go; each letter's origin unless given." });

const v1ParkingSchema = z
  .discriminatedUnion("kind", [
    parkingSchema.options[0].meta({ description: "Move letters redriven too often to this queue." }),
    parkingSchema.options[1].meta({ description: "Leave them in the DLQ, marked `parked` in the ledger." }),
  ])
  .meta({
    id: "RedriveParking",
    description: `What happens to a letter already redriven \`redriveLimit\` times (default ${DEFAULTS.redriveLimit}): it is parked, not cycled again.`,
  });

export const redrivePlanRequestSchema = previewSchema
  .extend({
    ...selectionRequestFields(previewSchema.shape),
    target: v1TargetSchema.default({ kind: "origin" }),
    parking: v1ParkingSchema
      .optional()
      .meta({ description: "Give it to check a named parking queue's protection too." }),
  })
  .meta({ id: "RedrivePlanRequest" });

const p = planSchema.shape;
export const redriveStartRequestSchema = redrivePlanRequestSchema
  .extend({
    fix: p.fix.meta({ description: "Which fix this redrive follows (free text, 3 to 2000 characters; recorded)." }),
    confirmedCount: p.confirmedCount.meta({
      description:
        "The `count` of the plan you reviewed. If the selection holds another number now, nothing starts: 409 `conflict:count`, the detail names the new count; plan again and confirm it.",
    }),
    sample: sampleSchema.default(DEFAULTS.sample).meta({
      description: `Stage 1's size: \`{ count }\` letters or \`{ percent }\` of the set (default ${DEFAULTS.sample.count} letters).`,
    }),
    watchSeconds: p.watchSeconds.meta({
      description: `How long the sample is watched for letters coming back to the DLQ (default ${DEFAULTS.watchSeconds}).`,
    }),
    rate: p.rate.meta({ description: `Stage 2's rate, letters per second (default ${DEFAULTS.rate}).` }),
    redriveLimit: p.redriveLimit.meta({
      description: `A letter redriven this many times already is parked (default ${DEFAULTS.redriveLimit}).`,
    }),
    parking: v1ParkingSchema.default({ kind: "mark" }),
    breakerThreshold: p.breakerThreshold.meta({
      description: `The job pauses itself when more than this share of redriven letters come back (default ${DEFAULTS.breakerThreshold}).`,
    }),
    breakerWindow: p.breakerWindow.meta({
      description: `Over the last this many redriven letters (default ${DEFAULTS.breakerWindow}).`,
    }),
    breakerMinLetters: p.breakerMinLetters.meta({
      description: `The breaker judges only after this many (default ${DEFAULTS.breakerMinLetters}).`,
    }),
    acceptRisk: p.acceptRisk.meta({
      description:
        "Read a DLQ whose reading can cost letters (a quorum queue with a delivery limit); needs dlq:browse-risky.",
    }),
    confirmLessProtected: p.confirmLessProtected.meta({
      description:
        "An admin confirms sending letters where some role sees their payloads less masked than in the DLQ (the plan's `targetProtection`); without it such a start is 409 `conflict:redrive-target`.",
    }),
  })
  .meta({ id: "RedriveStartRequest" });

const targetReadersSchema = z
  .object({
    target: z.string().meta({ description: "The queue or topic." }),
    count: z
      .number()
      .int()
      .nullable()
      .meta({ description: "How many readers the broker reports; null when it cannot tell (SQS keeps no list)." }),
    names: z.array(z.string()).meta({ description: "Each reader in the broker's words (at most 20)." }),
    summary: z.string().meta({ description: "One sentence, with figures." }),
  })
  .meta({ id: "TargetReaders" });

const sampleEvidenceSchema = z
  .object({
    target: z.string().meta({ description: "A queue or topic the sample's copies went to." }),
    state: z.enum(["taken", "waiting", "no_reader", "unknown"]).meta({
      description:
        "taken: a reader took every copy (they left the queue; a consumer group or subscription is past them); waiting: someone reads the target but the copies may still wait there; no_reader: nobody reads it; unknown: the broker cannot say, or the look failed (`text` says why).",
    }),
    text: z.string().meta({ description: "The evidence in words, with the figures seen." }),
    readers: targetReadersSchema,
  })
  .meta({ id: "SampleEvidence" });

export const redrivePreviewSchema = z
  .object({
    ...planCountFields(),
    target: z.string().meta({ description: "Where the letters would go, in words." }),
    orderedStream: z.boolean().meta({
      description: "Letters of ordered streams (Kafka keys, FIFO groups): redriven in order, one at a time per key.",
    }),
    warnings: z.array(z.string()),
    nativeMoveNote: z
      .string()
      .nullable()
      .meta({ description: "Set when the broker's own bulk move could do this instead, with its trade-off." }),
    targetProtection: z.object({
      message: z.string().nullable(),
      lessProtected: z.array(
        z.object({ kind: z.enum(["target", "parking"]), queue: z.string(), roles: z.array(z.string()) }),
      ),
      canConfirm: z
        .boolean()
        .meta({ description: "Your role may confirm a less protected destination (`confirmLessProtected`)." }),
    }),
    readers: z
      .array(
        z.object({
          target: z.string(),
          readers: targetReadersSchema.nullable().meta({
            description: "Who reads it, as the broker tells it; null when it cannot tell (`error` says why).",
          }),
          error: z.string().nullable(),
          warning: z.string().nullable().meta({
            description:
              "Set when nobody reads the target: a sample sent there cannot come back, so its verdict would be inconclusive.",
          }),
        }),
      )
      .meta({
        description:
          "Who consumes where the sample would go: the named target, or (back to origin) up to 5 origins the triage index knows for the selection.",
      }),
  })
  .meta({ id: "RedrivePreview" });

const STAGES = ["sample", "watching", "awaiting_bulk", "bulk", "done"] as const;

export const redriveSchema = z
  .object({
    id: z.string().meta({ description: "The redrive's id (its job id, and the operation id of its audit rows)." }),
    connectionId: z.string(),
    queue: z.string(),
    state: z.enum(JOB_STATES).meta({
      description:
        "The job's state: queued → running → paused (sample done, operator pause, breaker, broker away) → running → succeeded; or cancelling → cancelled, or failed. Terminal: succeeded, cancelled, failed.",
    }),
    stage: z.enum(STAGES).meta({
      description:
        "sample (stage 1 moving), watching (waiting for sample letters to come back), awaiting_bulk (the sample is done: wait for `bulk.ready`, read `sampleVerdict`, then POST …/bulk), bulk (stage 2), done.",
    }),
    progress: z.record(z.string(), z.unknown()).meta({
      description:
        'Figures for a progress bar: total, pending, redriven, failed, parked, returned, rate, eta (seconds), …; once the redrive has ended, `result`: `{ complete, left, summary }` (complete only when every selected letter was moved or parked; otherwise `summary` says what is left, e.g. "2 moved, 1 failed and still in the DLQ").',
    }),
    error: z.string().nullable(),
    pauseReason: z
      .string()
      .nullable()
      .meta({ description: "Why it is paused, in words (null unless state is paused)." }),
    pauseRequested: z.boolean(),
    cancelRequested: z.boolean(),
    sampleVerdict: z.enum(["clean", "returned", "inconclusive"]).nullable().meta({
      description:
        "After the watch: clean (a reader took every sample letter, as `sampleEvidence` shows, and none came back), returned (some came back: `sampleReturned`), or inconclusive (none came back, but nothing shows a reader took them: nobody reads a target, the copies may still wait there, or the broker cannot tell); null before.",
    }),
    sampleReturned: z.number().int(),
    sampleEvidence: z
      .array(sampleEvidenceSchema)
      .nullable()
      .meta({ description: "What the look at each target the sample went to found after the watch; null before." }),
    bulk: z.object({ ready: z.boolean(), needsOverride: z.boolean(), needsReason: z.boolean() }).meta({
      description:
        "ready: stage 2 may be started now (the job has paused after its sample, waiting for you: poll for this, not for `stage`); needsOverride: only by an admin with an `overrideReason` (sample letters came back); needsReason: the sample was inconclusive, so starting the rest needs a `continueAnywayReason`.",
    }),
    plan: z.object({
      selection: v1SelectionSchema,
      target: v1TargetSchema,
      fix: z.string(),
      total: z.number().int().meta({ description: "Letters in the redrive (its ledger)." }),
      sampleSize: z.number().int(),
      watchSeconds: z.number().int(),
      rate: z.number(),
      redriveLimit: z.number().int(),
      parking: v1ParkingSchema,
      breakerThreshold: z.number(),
      breakerWindow: z.number().int(),
      acceptRisk: z.boolean(),
    }),
    createdBy: z.string().nullable(),
    bulkStartedBy: z.string().nullable(),
    bulkOverrideReason: z.string().nullable(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    heartbeatAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "Redrive" });

export const redriveLedgerRowSchema = z
  .object({
    seq: z.number().int().meta({ description: "Position in the ledger (the triage index's order)." }),
    letterId: z.string(),
    sha256: z
      .string()
      .meta({ description: "The payload's SHA-256 as your role may see it (masked where the payload is)." }),
    messageId: z.string().nullable(),
    originalMessageId: z.string().nullable(),
    prevCount: z.number().int().meta({ description: "Times the letter had been redriven before." }),
    orderingKey: z.string().nullable(),
    stage: z.string().nullable().meta({ description: "sample or bulk: which stage moved it." }),
    state: z.enum(LEDGER_STATES as [string, ...string[]]),
    attempts: z.number().int(),
    destination: z.string().nullable(),
    reason: z.string().nullable(),
    replayId: z.string().nullable().meta({ description: "The `x-dlq-replay-id` the copy carries." }),
    movedAt: z.iso.datetime().nullable(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "RedriveLedgerRow" });

export const redriveDetailSchema = ledgerJobDetailOf({
  key: "redrive",
  job: redriveSchema,
  row: redriveLedgerRowSchema,
  id: "RedriveDetail",
  counts: "Letters per ledger state (moved, pending, failed, parked, returned, …).",
  ledger: "One page of the ledger, by `seq`.",
});

const idParams = jobIdParams("redrive");

export const planRedriveOperation = defineOperation({
  method: "post",
  tag: "Redrive",
  path: "/redrives/plan",
  operationId: "planRedrive",
  summary: "Plan a redrive: the count, scope, target and warnings",
  description:
    "Counts the selection in the triage index (as your role sees it) and says where the letters would go. Moves nothing. The answer's `count` is what POST /api/v1/redrives needs as `confirmedCount`. Needs redrive:sample (operators, admins); audited `redrive.plan`.",
  problems: [400, 403, 404, 503],
  body: redrivePlanRequestSchema,
  response: redrivePreviewSchema,
});

export const startRedriveOperation = defineOperation({
  method: "post",
  tag: "Redrive",
  path: "/redrives",
  operationId: "startRedrive",
  summary: "Start a redrive (stage 1, the sample) with the confirmed count",
  description: [
    "Two steps, as in the console: POST /api/v1/redrives/plan, review its `count`, then start with the same selection and `confirmedCount` = that count.",
    "The set is counted again when the job is created: if it no longer holds `confirmedCount` letters, nothing starts and the answer is 409 `conflict:count` whose detail names the new count, so a script never redrives more (or other) letters than it saw.",
    "Answers 202 with the redrive (state `queued`, stage `sample`). Poll GET /api/v1/redrives/{id}: after the sample is moved and watched, the job pauses with stage `awaiting_bulk` and a `sampleVerdict`; then POST /api/v1/redrives/{id}/bulk starts the rest at `rate`.",
    "Needs redrive:sample (operators, admins); audited `redrive.start` with the plan and the fix; operation id = the redrive's id.",
  ].join("\n\n"),
  problems: [400, 403, 404, 409, 503],
  body: redriveStartRequestSchema,
  status: 202,
  response: redriveSchema,
});

export const listRedrivesOperation = ledgerJobListOperation({
  tag: "Redrive",
  noun: "redrives",
  description: "Redrives of every DLQ or of one. Needs redrive:read (every role); a refusal is audited `redrive.list`.",
  item: redriveSchema,
  pageId: "RedrivePage",
});

export const getRedriveQuerySchema = ledgerPageQuerySchema(LEDGER_STATES, {
  after: "`nextAfter` of the previous answer: the ledger page starts after this seq.",
  limit: "Ledger rows per page.",
});

export const getRedriveOperation = defineOperation({
  method: "get",
  tag: "Redrive",
  path: "/redrives/{id}",
  operationId: "getRedrive",
  summary: "One redrive: state, stage, sample verdict, counts and a ledger page",
  description:
    "Poll this while a redrive runs: `redrive.state`, `redrive.stage`, `redrive.sampleVerdict` with `redrive.sampleEvidence`, `redrive.bulk.ready`, `redrive.progress` and `counts`. The ledger (one row per letter) pages by `after`/`nextAfter`. Needs redrive:read (every role); a refusal is audited `redrive.view`.",
  problems: [400, 403, 404],
  params: idParams,
  query: getRedriveQuerySchema,
  response: redriveDetailSchema,
});

export const redriveBulkRequestSchema = z
  .object({
    overrideReason: z.string().trim().min(3).max(2000).optional().meta({
      description:
        "Only when sample letters came back (`bulk.needsOverride`): why the rest goes anyway. Needs redrive:override (admins); recorded.",
    }),
    continueAnywayReason: z.string().trim().min(3).max(2000).optional().meta({
      description:
        "Only when the sample was inconclusive (`bulk.needsReason`): why the rest goes although nothing shows a reader took the sample. Anyone who may start stage 2; recorded, audited `redrive.continue_anyway` with the evidence.",
    }),
  })
  .meta({ id: "RedriveBulkRequest" });

export const startRedriveBulkOperation = defineOperation({
  method: "post",
  tag: "Redrive",
  path: "/redrives/{id}/bulk",
  operationId: "startRedriveBulk",
  summary: "Start stage 2: the rest of the letters, at the plan's rate",
  description:
    "Send `{}` after a clean sample (`sampleVerdict` clean, `bulk.ready`); `{ continueAnywayReason }` after an inconclusive one (without it, 400 `bad_request:continue-reason`); `{ overrideReason }` as an admin when letters came back (without it, 400 for an admin, 403 for others). Before the verdict, or when stage 2 already started, 409 `conflict:redrive`. Needs redrive:bulk (operators, admins); audited `redrive.bulk_start`. Answers the redrive (stage `bulk`); poll GET /api/v1/redrives/{id} until state `succeeded`.",
  problems: [400, 403, 404, 409],
  params: idParams,
  body: redriveBulkRequestSchema,
  response: redriveSchema,
});

const control = (verb: "pause" | "resume" | "cancel", summary: string, description: string) =>
  defineOperation({
    method: "post",
    tag: "Redrive",
    path: `/redrives/{id}/${verb}`,
    operationId: `${verb}Redrive`,
    summary,
    description: `${description} No body is read. Needs redrive:sample (operators, admins); audited \`redrive.${verb}\`. Answers the redrive as it is now; a state that does not allow this is 409 \`conflict:redrive\`.`,
    problems: [403, 404, 409],
    params: idParams,
    response: redriveSchema,
  });

export const pauseRedriveOperation = control(
  "pause",
  "Pause a redrive",
  "A running redrive stops at its next batch (or during the watch): `pauseRequested` is true at once, state `paused` when it stopped.",
);
export const resumeRedriveOperation = control(
  "resume",
  "Resume a paused redrive",
  "Continues a redrive paused by an operator, its breaker or a broker outage (the breaker's window starts afresh). A sample awaiting its decision is continued with …/bulk instead.",
);
export const cancelRedriveOperation = control(
  "cancel",
  "Cancel a redrive",
  "Queued or paused: cancelled at once; running: state `cancelling`, then `cancelled` at its next batch. Letters not yet moved stay in the DLQ, untouched.",
);

/**
 * A use case's view as this API's schema reads it (the JSON columns are typed `unknown` in the
 * view; they were parsed by the same schemas when the redrive was created). The route's operation
 * parses it again, so nothing outside the schema leaves.
 */
export const asRedrive = (v: unknown) => v as z.input<typeof redriveSchema>;
export const asRedriveDetail = (v: unknown) => v as z.input<typeof redriveDetailSchema>;
