import "server-only";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import type { Permission, Role } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { visibleSha256 } from "@/lib/masking/digest";
import { maskingPolicy } from "@/lib/masking/policy";
import { jobsPage } from "../page";
import { jobStore } from "../store";
import type { JobRecord } from "../types";

/**
 * What a ledger job's page and API read, shared by redrive and discard: the query for one job's
 * ledger page, the job's counts and ledger page as the reader's role may see them, and a list of
 * jobs joined to their plans.
 */

/** One job's ledger page: its id, the seq to start after, the page size (1 to 1000) and one state or all. */
export function ledgerQuerySchema<S extends string>(states: readonly S[]) {
  return z.object({
    jobId: z.string(),
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
    state: z.enum(states as unknown as [S, ...S[]]).optional(),
  });
}

/**
 * The job's counts per state and a keyset page of its ledger, read together. The ledger records
 * each letter's SHA-256: shown as the reader's role may see it (lib/masking/digest.ts).
 */
export async function readLedger<C, R extends { sha256: string }>(
  role: Role,
  job: Pick<JobRecord, "connectionId" | "queue">,
  read: { counts: () => Promise<C>; page: () => Promise<{ rows: R[]; nextSeq: number | null }> },
): Promise<{ counts: C; ledger: R[]; nextAfter: number | null }> {
  const [counts, page] = await Promise.all([read.counts(), read.page()]);
  const policy = await maskingPolicy(role, job.connectionId, job.queue);
  const ledger = page.rows.map((r) => ({ ...r, sha256: visibleSha256(r.sha256, policy) }));
  return { counts, ledger, nextAfter: page.nextSeq };
}

/** A job of the kind with its plan; any other id (or none) is `not_found:<kind>`, "There is no such <kind>.". */
export async function loadLedgerJob<P>(
  kind: "redrive" | "discard",
  jobId: unknown,
  planOf: (jobId: string) => Promise<P | null>,
): Promise<{ job: JobRecord; plan: P }> {
  const job = await jobStore().get(typeof jobId === "string" ? jobId : "");
  const plan = job?.kind === kind ? await planOf(job.id) : null;
  if (!job || !plan) throw new AppError(`not_found:${kind}`, { userMessage: `There is no such ${kind}.` });
  return { job, plan };
}

/** Jobs with their plans, in one query for the plans (a job without one is left out). */
export async function withPlans<P extends { jobId: string }, V>(
  jobs: JobRecord[],
  plansOf: (jobIds: string[]) => Promise<P[]>,
  view: (job: JobRecord, plan: P) => V,
): Promise<V[]> {
  const plans = await plansOf(jobs.map((j) => j.id));
  const byId = new Map(plans.map((p) => [p.jobId, p]));
  return jobs.filter((j) => byId.has(j.id)).map((j) => view(j, byId.get(j.id)!));
}

/** What a list of one kind of ledger job needs: the permission it is read under, the refusal's audit action, the views. */
export interface LedgerJobList<V> {
  kind: "redrive" | "discard";
  permission: Permission;
  /** Audited when the actor may not list (e.g. "redrive.list"). */
  action: string;
  views: (jobs: JobRecord[]) => Promise<V[]>;
}

function authorizeList(
  actor: Actor,
  meta: RequestMeta,
  l: LedgerJobList<unknown>,
  input: { connectionId?: string; queue?: string },
) {
  return authorize(actor, l.permission, {
    action: l.action,
    connectionId: input.connectionId ?? null,
    queue: input.queue ?? null,
    meta,
  });
}

/** The newest 50 jobs of the kind, across every DLQ or one DLQ's (the pages' lists). */
export async function listLedgerJobs<V>(
  actor: Actor,
  meta: RequestMeta,
  l: LedgerJobList<V>,
  input: { connectionId?: string; queue?: string },
): Promise<V[]> {
  await authorizeList(actor, meta, l, input);
  const jobs = await jobStore().list({ kind: l.kind, connectionId: input.connectionId, queue: input.queue }, 50);
  return l.views(jobs);
}

/** The jobs of the kind newest first, one keyset page at a time (the API's lists). */
export async function listLedgerJobPage<V>(
  actor: Actor,
  meta: RequestMeta,
  l: LedgerJobList<V>,
  input: { connectionId?: string; queue?: string; cursor?: string; limit: number },
): Promise<{ items: V[]; nextCursor: string | null }> {
  await authorizeList(actor, meta, l, input);
  const page = await jobsPage(
    { kinds: [l.kind], connectionId: input.connectionId, queue: input.queue },
    { cursor: input.cursor, limit: input.limit },
  );
  return { items: await l.views(page.jobs), nextCursor: page.nextCursor };
}
