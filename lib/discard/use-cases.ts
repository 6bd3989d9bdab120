import "server-only";
import { z } from "zod";
import { recordAudit, recordAuditIn } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { audited, errorCodeOf, jobActEntry, jobScope } from "@/lib/use-case/audited";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { DiscardPlan } from "@/lib/generated/prisma/client";
import { discardResult } from "./result";
import type { JobRecord } from "@/lib/jobs/types";
import {
  cancelLedgerJob,
  type LedgerJobList,
  ledgerQuerySchema,
  listLedgerJobPage,
  ledgerPlanFields,
  listLedgerJobs,
  loadLedgerJob,
  readLedger,
  startFailure,
  startLedgerJob,
  withPlans,
} from "@/lib/jobs/ledger";
import { jobViewBase, type JobViewBase } from "@/lib/jobs/view";
import type { Selection } from "@/lib/selection/selection";
import {
  countDiscardable,
  countDiscardStates,
  discardLedgerPage,
  DISCARD_STATES,
  addUnindexedLetter,
  populateDiscardLedger,
  type DiscardRow,
  type DiscardState,
} from "./ledger";
import { assertConfirmedCount, describeSelection } from "@/lib/selection/selection";
import { discardPreviewSchema, discardStartSchema, unindexedOf, type UnindexedLetter } from "./plan";
import { maskingPolicy } from "@/lib/masking/policy";
import { selectionFor } from "@/lib/selection/scoped";
import { visibleSha256 } from "@/lib/masking/digest";
import { parseInput } from "@/lib/use-case/input";

/**
 * Discard use cases: authorize → validate (zod) → act → audit. Server actions and route handlers
 * call these; the job handler (./handler.ts) does the archiving and removing. Operation id = job id.
 */
const rawScope = (input: unknown, action: string) => {
  const raw = (input ?? {}) as Record<string, unknown>;
  return {
    action,
    connectionId: typeof raw.connectionId === "string" ? raw.connectionId : null,
    queue: typeof raw.queue === "string" ? raw.queue : null,
  };
};

export interface DiscardPreview {
  connectionId: string;
  queue: string;
  count: number;
  scope: string;
  /** How long the archive keeps what is discarded, and what a later re-publish keeps. */
  warnings: string[];
}

/** What a discard would apply to: the exact count the admin must confirm and the scope in words. Audited `discard.plan`. */
export async function planDiscard(actor: Actor, meta: RequestMeta, input: unknown): Promise<DiscardPreview> {
  const scope = rawScope(input, "discard.plan");
  await authorize(actor, "discard:run", { ...scope, meta });
  const p = parseInput(discardPreviewSchema, input, "bad_request:discard");
  return audited(
    actor,
    meta,
    scope,
    async () => {
      const adapter = adapterFor(p.connectionId);
      // Evaluated as the actor sees the letters: a count must not answer for masked values (masked-search.ts).
      const { filter, letterIds } = await selectionFor(actor, p);
      const indexed = await countDiscardable(getDb(), filter, letterIds);
      const single = indexed === 0 ? unindexedOf(p) : null;
      const count = single ? 1 : indexed;
      const warnings: string[] = [];
      if (single)
        warnings.push(
          "This letter is not in the triage index (the DLQ has not been scanned since it arrived): it is discarded by its id, and only if the DLQ's copy still has the checksum its page showed you.",
        );
      else if (count === 0)
        warnings.push("The selection is empty in the triage index: scan the DLQ again if letters arrived since.");
      const summary = await adapter.describeDlq(p.queue).catch(() => null);
      if (summary?.readRisk) {
        warnings.push(
          `${summary.readRisk.message} A discard reads the DLQ again, and every letter it does not discard would count that read: move the letters to safety from the DLQ's page first, then discard from the safe queue.`,
        );
      }
      if (!adapter.capabilities.perLetterRemoval) {
        warnings.push(
          `${adapter.displayName} cannot delete a single record: discarded records stay in the ${adapter.vocabulary.queue} until its retention removes them, marked discarded by the console.`,
        );
      }
      for (const limit of adapter.capabilities.republishLimits ?? []) warnings.push(`If you undo this later: ${limit}`);
      return { connectionId: p.connectionId, queue: p.queue, count, scope: describeSelection(p.selection), warnings };
    },
    (r) => ({ count: r.count, scope: r.scope }),
  );
}

export interface DiscardView extends JobViewBase {
  selection: Selection;
  reason: string;
  total: number;
  createdBy: string | null;
}

function toView(j: JobRecord, p: DiscardPlan): DiscardView {
  return {
    ...jobViewBase(j),
    selection: p.selection as Selection,
    reason: p.reason,
    total: p.total,
    createdBy: p.createdByEmail,
  };
}

function loadDiscard(jobId: unknown): Promise<{ job: JobRecord; plan: DiscardPlan }> {
  return loadLedgerJob("discard", jobId, (id) => getDb().discardPlan.findUnique({ where: { jobId: id } }));
}

/**
 * Creates the discard job and its ledger (one INSERT … SELECT from the triage index) in one
 * transaction, after checking the set still holds the count the admin confirmed. Audited
 * `discard.start` with the reason and the scope; operation id = job id.
 */
export async function startDiscard(actor: Actor, meta: RequestMeta, input: unknown): Promise<DiscardView> {
  const base = rawScope(input, "discard.start");
  await authorize(actor, "discard:run", { ...base, meta });
  const p = parseInput(discardStartSchema, input, "bad_request:discard");
  adapterFor(p.connectionId);
  if (p.acceptRisk) await authorize(actor, "dlq:browse-risky", { ...base, meta });
  // Evaluated as the actor sees the letters: a count must not answer for masked values (masked-search.ts).
  const { filter, letterIds } = await selectionFor(actor, p);
  const unindexed = unindexedOf(p);
  const single =
    unindexed && (await countDiscardable(getDb(), filter, letterIds)) === 0
      ? await readUnindexed(actor, p, unindexed)
      : null;
  const started = await startLedgerJob(actor, meta, {
    kind: "discard",
    action: "discard.start",
    connectionId: p.connectionId,
    queue: p.queue,
    params: { discard: true },
    build: async (tx, jobId) => {
      const n = single
        ? await addUnindexedLetter(tx, jobId, single)
        : await populateDiscardLedger(tx, jobId, filter, letterIds);
      assertConfirmedCount(n, p.confirmedCount, "count");
      const plan = await tx.discardPlan.create({ data: { ...ledgerPlanFields(jobId, p, n, actor), reason: p.reason } });
      return { plan, progress: { read: 0, total: n, pending: n, discarded: 0, failed: 0 } };
    },
    failed: startFailure(actor, meta, "discard.start", p),
    details: (plan) => ({
      reason: p.reason,
      count: plan.total,
      scope: describeSelection(p.selection),
      selection: p.selection,
      acceptRisk: p.acceptRisk,
    }),
  });
  return toView(started.job, started.plan);
}

/** Cancels: queued at once, running at its next batch. Letters not yet discarded stay in the DLQ. Audited `discard.cancel`. */
export async function cancelDiscard(actor: Actor, meta: RequestMeta, input: unknown): Promise<DiscardView> {
  const scope = jobScope(input, "discard.cancel");
  await authorize(actor, "discard:run", { ...scope, meta });
  const { job, plan } = await loadDiscard(
    parseInput(z.object({ jobId: z.string() }), input, "bad_request:discard").jobId,
  );
  const entry = (outcome: "success" | "failure", details: Record<string, unknown>) =>
    jobActEntry(actor, meta, job, scope.action, outcome, details);
  const { progress } = toView(job, plan);
  try {
    // The request and its audit row commit together, before the worker can end the discard.
    await cancelLedgerJob(job, plan, {
      finishedAction: "discard.finished",
      result: async (tx) => discardResult(await countDiscardStates(tx, job.id)),
      record: (tx, state) => recordAuditIn(tx, entry("success", { jobId: job.id, state, progress })),
    });
  } catch (e) {
    await recordAudit(entry("failure", { error: errorCodeOf(e) })).catch(() => undefined);
    throw e;
  }
  const r = await loadDiscard(job.id);
  return toView(r.job, r.plan);
}

const ledgerQuery = ledgerQuerySchema(DISCARD_STATES);

/** One discard with its progress, counts per ledger state, and a keyset page of its ledger. */
export async function getDiscard(
  actor: Actor,
  meta: RequestMeta,
  input: unknown,
): Promise<{
  discard: DiscardView;
  counts: Record<DiscardState, number>;
  ledger: DiscardRow[];
  nextAfter: number | null;
}> {
  await authorize(actor, "discard:read", { ...jobScope(input, "discard.view"), meta });
  const q = parseInput(ledgerQuery, input, "bad_request:discard");
  const { job, plan } = await loadDiscard(q.jobId);
  const read = await readLedger(actor.role, job, {
    counts: () => countDiscardStates(getDb(), job.id),
    page: () => discardLedgerPage(getDb(), job.id, { afterSeq: q.after, limit: q.limit, state: q.state }),
  });
  return { discard: toView(job, plan), ...read };
}

/** Discards, newest 50, across every DLQ or one DLQ's. Read like a discard's page: `discard:read`, refusals audited `discard.list`. */
export function listDiscards(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId?: string; queue?: string },
): Promise<DiscardView[]> {
  return listLedgerJobs(actor, meta, DISCARDS, input);
}

const DISCARDS: LedgerJobList<DiscardView> = {
  kind: "discard",
  permission: "discard:read",
  action: "discard.list",
  views: (jobs) => withPlans(jobs, (ids) => getDb().discardPlan.findMany({ where: { jobId: { in: ids } } }), toView),
};

/**
 * Discards newest first, one keyset page at a time (the API's list); listDiscards, which the pages
 * use, is unchanged. Same permission and refusal audit (`discard.list`).
 */
export function listDiscardPage(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId?: string; queue?: string; cursor?: string; limit: number },
): Promise<{ items: DiscardView[]; nextCursor: string | null }> {
  return listLedgerJobPage(actor, meta, DISCARDS, input);
}

/**
 * The one unindexed letter of a discard, read from the DLQ now: it must still be there with the
 * checksum its page showed the admin (compared as that role sees it), or nothing starts.
 */
async function readUnindexed(
  actor: Actor,
  p: { connectionId: string; queue: string },
  u: UnindexedLetter,
): Promise<{ letterId: string; sha256: string; messageId: string | null }> {
  const l = await withTimeout(
    adapterFor(p.connectionId).getLetter(p.queue, u.letterId, { maxBodyBytes: 0 }),
    30_000,
    "getLetter",
  );
  if (!l)
    throw new AppError("conflict:letter-gone", {
      userMessage: "This letter is no longer in the DLQ: nothing was discarded.",
    });
  if (visibleSha256(l.sha256, await maskingPolicy(actor.role, p.connectionId, p.queue)) !== u.digest)
    throw new AppError("conflict:checksum", {
      userMessage:
        "This letter's content is not what its page showed you (it changed, or another letter has its id now): nothing was discarded. Open its page again.",
    });
  return { letterId: l.id, sha256: l.sha256, messageId: l.messageId };
}
