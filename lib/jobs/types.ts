import type { Job } from "@/lib/generated/prisma/client";

export type JobKind = "scan" | "redrive" | "discard" | "safe-move" | "group-skip";
export const JOB_STATES = ["queued", "running", "paused", "cancelling", "cancelled", "succeeded", "failed"] as const;
export type JobState = (typeof JOB_STATES)[number];
/** States that hold their DLQ (one at a time per DLQ, enforced by a partial unique index). */
export const HOLDING_STATES: readonly JobState[] = ["running", "paused", "cancelling"];
export const ACTIVE_STATES: readonly JobState[] = ["queued", "running", "paused", "cancelling"];
export const TERMINAL_STATES: readonly JobState[] = ["cancelled", "succeeded", "failed"];

export interface JobProgress {
  read?: number;
  total?: number | null;
  /** Letters per second over the current run. */
  rate?: number;
  /** Seconds left, from total and rate; null when unknown. */
  eta?: number | null;
  [k: string]: unknown;
}

export type JobRecord = Job;

/** What a job's handler sees while it runs. */
export interface JobContext {
  job: JobRecord;
  /** Aborted when this process stops or loses the lease: stop between batches and return. */
  signal: AbortSignal;
  /** Saves progress and/or the resume point, extends the lease; tells the handler whether a cancel was requested. */
  checkpoint(update: { progress?: JobProgress; checkpoint?: unknown }): Promise<{ cancelRequested: boolean }>;
}

export type JobOutcome = { state: "succeeded" | "cancelled"; progress?: JobProgress };
export type JobHandler = (ctx: JobContext) => Promise<JobOutcome>;
