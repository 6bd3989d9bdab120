import { z } from "zod";
import { JOB_KINDS, type JobView } from "@/lib/jobs/use-cases";
import { JOB_STATES } from "@/lib/jobs/types";
import { DISCARD_STATES } from "@/lib/discard/ledger";
import { LEDGER_STATES } from "@/lib/redrive/plan";
import { defineOperation } from "../registry";
import { discardLedgerRowSchema } from "./discards";
import { redriveLedgerRowSchema } from "./redrives";

/**
 * Every background job the console runs (scans, redrives, discards, moves to safety), read the same
 * way whatever its kind. Which role sees which kind is lib/jobs/use-cases.ts JOB_READ_PERMISSION.
 */

export const jobSchema = z
  .object({
    id: z.string(),
    kind: z.string().meta({ description: `What the job does: ${JOB_KINDS.join(", ")}.` }),
    connectionId: z.string(),
    queue: z.string().meta({ description: "The DLQ the job works on." }),
    state: z
      .enum(JOB_STATES)
      .meta({ description: "queued, running, paused, cancelling; terminal: succeeded, cancelled, failed." }),
    progress: z
      .record(z.string(), z.unknown())
      .meta({ description: "Figures of the kind's progress (read, total, rate, eta, …)." }),
    error: z.string().nullable(),
    cancelRequested: z.boolean(),
    attempts: z.number().int().meta({ description: "Runs so far (a job resumes after a restart)." }),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    heartbeatAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "BackgroundJob" });

export const jobPageSchema = z
  .object({
    items: z.array(jobSchema),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `cursor` for the next (older) page; null on the last." }),
  })
  .meta({ id: "BackgroundJobPage" });

const LEDGER_STATE_VALUES = [...new Set<string>([...LEDGER_STATES, ...DISCARD_STATES])] as [string, ...string[]];

export const jobLedgerPageSchema = z
  .object({
    jobId: z.string(),
    kind: z.enum(["redrive", "discard"]),
    items: z.array(z.union([redriveLedgerRowSchema, discardLedgerRowSchema])).meta({
      description: "Ledger rows in `seq` order: RedriveLedgerRow for a redrive, DiscardLedgerRow for a discard.",
    }),
    nextCursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last." }),
  })
  .meta({ id: "JobLedgerPage" });

export const listJobsQuerySchema = z.object({
  kind: z
    .enum(JOB_KINDS as [string, ...string[]])
    .optional()
    .meta({ description: "Only jobs of this kind (403 if your role may not read it)." }),
  state: z.enum(JOB_STATES).optional(),
  connectionId: z.string().trim().min(1).max(200).optional(),
  queue: z.string().trim().min(1).max(1000).optional(),
  cursor: z.string().trim().min(1).max(300).optional().meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export const listJobsOperation = defineOperation({
  method: "get",
  tag: "Jobs",
  path: "/jobs",
  operationId: "listJobs",
  summary: "Background jobs, newest first, by cursor",
  description:
    "Every job your role may read, by kind: scans need triage:read, redrives redrive:read, discards discard:read, moves to safety dlq:browse; jobs of other kinds are left out. Needs dlq:list; a refusal is audited `job.list`.",
  problems: [400, 403],
  query: listJobsQuerySchema,
  response: jobPageSchema,
});

const idParams = z.object({ id: z.string().min(1).max(100).meta({ description: "The job's id." }) });

export const getJobOperation = defineOperation({
  method: "get",
  tag: "Jobs",
  path: "/jobs/{id}",
  operationId: "getJob",
  summary: "One background job",
  description:
    "A job of a kind your role may not read answers 404, as an unknown id does (the refusal is audited `job.view`). Needs dlq:list.",
  problems: [403, 404],
  params: idParams,
  response: jobSchema,
});

export const jobLedgerQuerySchema = z.object({
  cursor: z
    .string()
    .trim()
    .regex(/^\d{1,15}$/, "must be the `nextCursor` of the previous page")
    .optional()
    .meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  state: z
    .enum(LEDGER_STATE_VALUES)
    .optional()
    .meta({ description: "Only rows in this state (a redrive's or a discard's ledger states)." }),
});

export const getJobLedgerOperation = defineOperation({
  method: "get",
  tag: "Jobs",
  path: "/jobs/{id}/ledger",
  operationId: "getJobLedger",
  summary: "A redrive's or a discard's ledger, by cursor",
  description:
    "One row per letter the job applies to, in order; page with `cursor` until `nextCursor` is null. Redrives need redrive:read, discards discard:read (refusals audited `redrive.view` / `discard.view`); other kinds keep no ledger (404).",
  problems: [400, 403, 404],
  params: idParams,
  query: jobLedgerQuerySchema,
  response: jobLedgerPageSchema,
});

export function toJobPage(page: { items: JobView[]; nextCursor: string | null }): z.output<typeof jobPageSchema> {
  return jobPageSchema.parse(page);
}
