import "server-only";
import { authorize } from "@/lib/auth/authorize";
import { can, type Permission } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { jobsPage } from "./page";
import { jobStore } from "./store";
import type { JobKind, JobRecord, JobState } from "./types";
import { jobViewBase, type JobViewBase } from "./view";

/**
 * Who may see a job of each kind: the permission that already guards that kind's own pages and
 * routes, so the generic job list never shows a role more than the kind's page would.
 * - scan: `triage:read`, as listScans/getScan (the triage index of a DLQ and the scans filling it).
 * - redrive: `redrive:read`, as listRedrives/getRedrive.
 * - discard: `discard:read`, as listDiscards/getDiscard.
 * - safe-move: `dlq:browse`, as listSafeMoves (shown on the DLQ's page to whoever may browse it).
 * - group-skip: `groups:read`, as listSkips/viewSkip (a consumer group's skips to its DLT).
 * A kind missing here (a new one) is shown to nobody until its rule is written down.
 */
export const JOB_READ_PERMISSION: Record<JobKind, Permission> = {
  scan: "triage:read",
  redrive: "redrive:read",
  discard: "discard:read",
  "safe-move": "dlq:browse",
  "group-skip": "groups:read",
};

export const JOB_KINDS = Object.keys(JOB_READ_PERMISSION) as JobKind[];

/** The kinds whose jobs this role may see. */
export function readableJobKinds(actor: Actor): JobKind[] {
  return JOB_KINDS.filter((k) => can(actor.role, JOB_READ_PERMISSION[k]));
}

/** Any job of any kind, as the generic job views show it: no params (they may name people), no ledger. */
export interface JobView extends JobViewBase {
  kind: string;
  attempts: number;
}

export function toJobView(j: JobRecord): JobView {
  return { ...jobViewBase(j), kind: j.kind, attempts: j.attempts };
}

export interface JobListInput {
  kind?: JobKind;
  state?: JobState;
  connectionId?: string;
  queue?: string;
  cursor?: string;
  limit: number;
}

/**
 * Every background job the actor may see (JOB_READ_PERMISSION), newest first, by cursor. Asking
 * for one kind the role may not read is refused and audited under `job.list`, with that kind's
 * permission, as the kind's own list would be.
 */
export async function listJobs(
  actor: Actor,
  meta: RequestMeta,
  input: JobListInput,
): Promise<{ items: JobView[]; nextCursor: string | null }> {
  const scope = { action: "job.list", connectionId: input.connectionId ?? null, queue: input.queue ?? null, meta };
  await authorize(actor, "dlq:list", scope);
  if (input.kind) await authorize(actor, JOB_READ_PERMISSION[input.kind], scope);
  const kinds = input.kind ? [input.kind] : readableJobKinds(actor);
  if (kinds.length === 0) return { items: [], nextCursor: null };
  const page = await jobsPage(
    { kinds, connectionId: input.connectionId, queue: input.queue, state: input.state },
    { cursor: input.cursor, limit: input.limit },
  );
  return { items: page.jobs.map(toJobView), nextCursor: page.nextCursor };
}

/**
 * One job, if the actor may see its kind. A job the role may not read answers "not found", as an
 * unknown id does (its existence is not told), and the refusal is audited `job.view` denied.
 */
export async function getJob(actor: Actor, meta: RequestMeta, jobId: string): Promise<JobRecord> {
  const scope = { action: "job.view", target: jobId, meta };
  await authorize(actor, "dlq:list", scope);
  const job = await jobStore().get(jobId);
  const notFound = new AppError("not_found:job", { userMessage: "There is no such job." });
  if (!job) throw notFound;
  const permission = JOB_READ_PERMISSION[job.kind as JobKind];
  if (!permission) throw notFound;
  await authorize(actor, permission, { ...scope, connectionId: job.connectionId, queue: job.queue }).catch(() => {
    throw notFound;
  });
  return job;
}
