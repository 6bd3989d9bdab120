import "server-only";
import { z } from "zod";
import type { Role } from "@/lib/auth/permissions";
import { visibleSha256 } from "@/lib/masking/digest";
import { maskingPolicy } from "@/lib/masking/policy";
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
