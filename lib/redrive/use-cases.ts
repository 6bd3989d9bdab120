import "server-only";
import { z } from "zod";
import { recordAudit } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { audited, auditActor, errorCodeOf, jobActEntry, jobScope } from "@/lib/use-case/audited";
import { adapterFor } from "@/lib/use-case/connection";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { Prisma, RedrivePlan } from "@/lib/generated/prisma/client";
import { wakeJobWorker } from "@/lib/jobs/process-worker";
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
import { countLetters, type LetterFilter } from "@/lib/triage/queries";
import type { SampleEvidence, TargetReaders } from "@/lib/brokers/target-readers";
import { maskingPolicy } from "@/lib/masking/policy";
import { selectionFor } from "@/lib/selection/scoped";
import { assertRepairAllowed, assertMayPatchMasked } from "@/lib/repair/group";
import { assertGroupRepairUnmasked } from "./repair-preview";
import { patchWithoutValues } from "@/lib/repair/patch";
import { pinPaused, requestPause, resumeJob, startBulkStage } from "./control";
import { checkTargetProtection, type LessProtected } from "./target-protection";
import type { RedriveParams } from "./runner-check";
import { evidenceLine, nobodyReadsWarning, sampleWatchOf, type SampleVerdict } from "./sample-verdict";
import { readersOf } from "./sample-watch";
import { redriveResult } from "./result";
import { countStates, hasLeftovers, ledgerPage, populateLedger, selectionWhere, type LedgerRow } from "./ledger";
import { LEDGER_STATES, planSchema, previewSchema, sampleCount, type RedriveRepair } from "./plan";
import { assertConfirmedCount, describeSelection, type Selection } from "@/lib/selection/selection";
import { parseInput } from "@/lib/use-case/input";

/**
 * Redrive use cases: authorize → validate (zod) → act → audit. Route handlers (app/api/redrive/**)
 * and the redrive pages' server actions call these; the job handler does the moving.
 * Operation id of a redrive = its job id.
 */
async function countSelection(filter: LetterFilter, letterIds?: string[]): Promise<number> {
  if (!letterIds) return countLetters(filter);
  const r = await getDb().$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL AND letter_id = ANY($3::text[])`,
    filter.connectionId,
    filter.queue,
    letterIds,
  );
  return Number(r[0]?.n ?? 0);
}

/**
 * The audit scope of an input not yet validated: its connection and DLQ as sent, whatever their
 * type (lib/discard's reads only strings).
 */
function sentDlqScope(input: unknown, action: string) {
  const raw = (input ?? {}) as Record<string, unknown>;
  return { action, connectionId: (raw.connectionId as string) ?? null, queue: (raw.queue as string) ?? null };
}

const wholeDlq = (s: Selection) => s.kind === "filter" && Object.values(s.filter).every((v) => v === undefined);

export interface RedrivePreview {
  connectionId: string;
  queue: string;
  count: number;
  scope: string;
  target: string;
  /** Letters of ordered streams (Kafka keys, FIFO groups): redriven in order, one at a time per key. */
  orderedStream: boolean;
  warnings: string[];
  /** Set when the broker's own bulk move could do this (whole DLQ back to its sources), with its trade-off. */
  nativeMoveNote: string | null;
  /**
   * Destinations (named target, parking queue) where some role would see these payloads less masked
   * than in the DLQ: starting then needs an admin's explicit confirmation (`confirmLessProtected`).
   */
  targetProtection: { message: string | null; lessProtected: LessProtected[]; canConfirm: boolean };
  /**
   * Who reads where the sample would go (the named target, or the origins the index knows for the
   * selection), as the broker tells it: a sample sent where nobody reads cannot come back, so its
   * verdict would be inconclusive.
   */
  readers: TargetReadersView[];
}

export interface TargetReadersView {
  target: string;
  /** What the broker says; null when it cannot tell, or the look failed (`error` says why). */
  readers: TargetReaders | null;
  error: string | null;
  /** "Nobody consumes queue X: …" when the broker reports no reader; else null. */
  warning: string | null;
}

/** At most this many origins are looked at for the form (a selection from many origins). */
const READER_TARGETS = 5;

/** The queues or topics the selection's letters came from, as the triage index recorded them (most letters first). */
async function originsOf(filter: LetterFilter, letterIds?: string[]): Promise<string[]> {
  const { sql, params } = selectionWhere(filter, letterIds);
  const rows = await getDb().$queryRawUnsafe<Array<{ origin: string }>>(
    `SELECT origin_queue AS origin FROM triage_letters WHERE ${sql} AND origin_queue IS NOT NULL
     GROUP BY origin_queue ORDER BY count(*) DESC, origin_queue LIMIT ${READER_TARGETS}`,
    ...params,
  );
  return rows.map((r) => r.origin);
}

async function targetReaders(adapter: ReturnType<typeof adapterFor>, targets: string[]): Promise<TargetReadersView[]> {
  return Promise.all(
    targets.map(async (target) => {
      const { readers, error } = await readersOf(adapter, target);
      return {
        target,
        readers,
        error,
        warning: readers ? nobodyReadsWarning(readers, adapter.vocabulary.queue) : null,
      };
    }),
  );
}

/** What a redrive would apply to: the count the operator must confirm, the scope in words, warnings. */
export async function planRedrive(actor: Actor, meta: RequestMeta, input: unknown): Promise<RedrivePreview> {
  const scope = sentDlqScope(input, "redrive.plan");
  await authorize(actor, "redrive:sample", { ...scope, meta });
  const p = parseInput(previewSchema, input, "bad_request:redrive");
  if (p.repair) await authorize(actor, "letter:repair", { ...scope, meta });
  // A patch that tests or edits a value masked for this role must not be answered (audited when refused).
  if (p.repair) await assertGroupRepairUnmasked(actor, meta, p, "redrive.plan");
  return audited(
    actor,
    meta,
    scope,
    async () => {
      const adapter = adapterFor(p.connectionId);
      if (p.repair) {
        assertRepairAllowed(p.connectionId, p.queue, adapter);
        assertMayPatchMasked(actor, await maskingPolicy(actor.role, p.connectionId, p.queue));
      }
      // Evaluated as the actor sees the letters: a count must not answer for masked values (masked-search.ts).
      const { filter, letterIds } = await selectionFor(actor, p);
      const count = await countSelection(filter, letterIds);
      const warnings: string[] = [];
      const orderedStream = adapter.capabilities.orderedKeys;
      if (orderedStream) {
        warnings.push(
          `Letters on ${adapter.displayName} can belong to ordered streams (${adapter.vocabulary.queue} keys). They are redriven in their original order, one at a time per key; consumers will see them after newer messages of the same key that already went through.`,
        );
      }
      if (count === 0)
        warnings.push("The selection is empty in the triage index: scan the DLQ again if letters arrived since.");
      const protection = await checkTargetProtection(p.connectionId, p.queue, p);
      const readers = await targetReaders(
        adapter,
        p.target.kind === "queue" ? [p.target.name] : await originsOf(filter, letterIds),
      );
      const nativeMoveNote =
        adapter.capabilities.nativeBulkMove && wholeDlq(p.selection) && p.target.kind === "origin"
          ? `${adapter.displayName} can move the whole DLQ back to its sources itself (its native bulk move, e.g. an SQS message move task, capped at 500 letters per second, or a RabbitMQ shovel): less to set up, but no sample, no watch, no rate you choose, no markers, no per-letter ledger and no parking. This console's redrive gives you those.`
          : null;
      return {
        connectionId: p.connectionId,
        queue: p.queue,
        count,
        scope: describeSelection(p.selection),
        target:
          p.target.kind === "origin"
            ? `each letter's ${adapter.vocabulary.origin}`
            : `${adapter.vocabulary.queue} ${p.target.name}`,
        orderedStream,
        warnings,
        nativeMoveNote,
        targetProtection: { ...protection, canConfirm: can(actor.role, "masking:manage") },
        readers,
      };
    },
    (r) => ({
      count: r.count,
      scope: r.scope,
      target: r.target,
      readers: r.readers.map((x) => ({ target: x.target, count: x.readers?.count ?? null, error: x.error })),
      lessProtected: r.targetProtection.lessProtected.length > 0,
      ...(p.repair ? { repair: repairSummary(p.repair) } : {}),
    }),
  );
}

export interface RedriveView extends JobViewBase {
  stage: string;
  pauseReason: string | null;
  pauseRequested: boolean;
  sampleVerdict: SampleVerdict | null;
  sampleReturned: number;
  /** After the watch: what the look at each target the sample went to found (null before the verdict). */
  sampleEvidence: SampleEvidence[] | null;
  /**
   * The operator may start stage 2 now: freely after a clean sample; after one that returned letters
   * only an admin with an override reason (`needsOverride`); after an inconclusive one anyone who may
   * start it, continuing anyway with a reason (`needsReason`).
   */
  bulk: { ready: boolean; needsOverride: boolean; needsReason: boolean };
  plan: {
    selection: Selection;
    target: unknown;
    fix: string;
    total: number;
    sampleSize: number;
    watchSeconds: number;
    rate: number;
    redriveLimit: number;
    parking: unknown;
    breakerThreshold: number;
    breakerWindow: number;
    acceptRisk: boolean;
    /** A redrive that repairs each letter: the patch and the stated reason; null for a plain redrive. */
    repair: RedriveRepair | null;
  };
  createdBy: string | null;
  bulkStartedBy: string | null;
  bulkOverrideReason: string | null;
}

/**
 * A redrive as `actor` may see it. A repairing redrive's patch values reach only roles that may
 * repair letters; others see its operations and paths (`patchWithoutValues`).
 */
function toView(j: JobRecord, p: RedrivePlan, actor: Actor): RedriveView {
  const repair = (p.repair as RedriveRepair | null) ?? null;
  return {
    ...jobViewBase(j),
    stage: p.stage,
    pauseReason: j.state === "paused" ? p.pauseReason : null,
    pauseRequested: p.pauseRequested,
    sampleVerdict: p.sampleVerdict as SampleVerdict | null,
    sampleReturned: p.sampleReturned,
    sampleEvidence: p.sampleVerdict ? (sampleWatchOf(p.sampleWatch)?.evidence ?? []) : null,
    bulk: {
      ready: j.state === "paused" && p.stage === "awaiting_bulk",
      needsOverride: p.stage === "awaiting_bulk" && p.sampleVerdict === "returned",
      needsReason: p.stage === "awaiting_bulk" && p.sampleVerdict !== "clean" && p.sampleVerdict !== "returned",
    },
    plan: {
      selection: p.selection as Selection,
      target: p.target,
      fix: p.fix,
      total: p.total,
      sampleSize: p.sampleSize,
      watchSeconds: p.watchSeconds,
      rate: p.rate,
      redriveLimit: p.redriveLimit,
      parking: p.parking,
      breakerThreshold: p.breakerThreshold,
      breakerWindow: p.breakerWindow,
      acceptRisk: p.acceptRisk,
      repair:
        repair && !can(actor.role, "letter:repair")
          ? { ...repair, patch: patchWithoutValues(repair.patch) as RedriveRepair["patch"] }
          : repair,
    },
    createdBy: p.createdByEmail,
    bulkStartedBy: p.bulkStartedBy,
    bulkOverrideReason: p.bulkOverrideReason,
  };
}

/** `audited`, under the redrive's operation id, so every row of one redrive shares it. */
async function auditedOp<T>(
  actor: Actor,
  meta: RequestMeta,
  job: JobRecord,
  action: string,
  work: () => Promise<T>,
  details: (r: T) => Record<string, unknown>,
): Promise<T> {
  const row = (outcome: "success" | "failure", d: Record<string, unknown>) =>
    recordAudit(jobActEntry(actor, meta, job, action, outcome, d));
  let result: T;
  try {
    result = await work();
  } catch (e) {
    await row("failure", { error: errorCodeOf(e) }).catch((err) =>
      console.error("audit write failed after a failed action", err),
    );
    throw e;
  }
  await row("success", details(result));
  return result;
}

/**
 * The code a failed start records: the one the error carries, whatever threw it (a database
 * error's own code too), where errorCodeOf records `internal:server` for any error not the
 * console's. Kept as redrive has always recorded it.
 */
const codeAsThrown = (e: unknown) => (e as AppError).code ?? "internal:server";

function loadRedrive(jobId: unknown): Promise<{ job: JobRecord; plan: RedrivePlan }> {
  return loadLedgerJob("redrive", jobId, (id) => getDb().redrivePlan.findUnique({ where: { jobId: id } }));
}

/**
 * Creates the redrive job and its ledger (one INSERT … SELECT from the triage index) in one
 * transaction, after checking that the set still holds the count the operator confirmed. Audited
 * `redrive.start` with the whole plan and the stated fix; operation id = job id.
 */
export async function startRedrive(actor: Actor, meta: RequestMeta, input: unknown): Promise<RedriveView> {
  const base = sentDlqScope(input, "redrive.start");
  await authorize(actor, "redrive:sample", { ...base, meta });
  const p = parseInput(planSchema, input, "bad_request:redrive");
  const adapter = adapterFor(p.connectionId); // unknown connections are not_found before anything is counted
  if (p.acceptRisk) await authorize(actor, "dlq:browse-risky", { ...base, meta });
  if (p.repair) await authorize(actor, "letter:repair", { ...base, meta });
  // Evaluated as the actor sees the letters: a count must not answer for masked values (masked-search.ts).
  const { filter, letterIds } = await selectionFor(actor, p);
  const failed = startFailure(actor, meta, "redrive.start", p, codeAsThrown);
  if (p.repair) {
    try {
      assertRepairAllowed(p.connectionId, p.queue, adapter);
      assertMayPatchMasked(actor, await maskingPolicy(actor.role, p.connectionId, p.queue));
    } catch (e) {
      const code = errorCodeOf(e);
      await recordAudit({
        actor: auditActor(actor),
        action: "redrive.start",
        outcome: code.startsWith("forbidden:") ? "denied" : "failure",
        connectionId: p.connectionId,
        queue: p.queue,
        requestId: meta.requestId,
        ip: meta.ip,
        details: { error: code, repair: true },
      }).catch(() => undefined);
      throw e;
    }
    // The same refusal as the group repair's preview and form (audited when it refuses): from the
    // v1 API and the redrive form too, a patch may not test or edit a value masked for this role.
    await assertGroupRepairUnmasked(actor, meta, p);
  }

  // A destination less protected than the DLQ: only an admin, explicitly (the confirmation is audited
  // and kept in the job's params, where every run checks that its starter still may give it).
  const protection = await checkTargetProtection(p.connectionId, p.queue, p);
  const lessProtected = protection.lessProtected.length > 0;
  if (lessProtected && !p.confirmLessProtected) {
    const admin = can(actor.role, "masking:manage");
    const e = new AppError("conflict:redrive-target", {
      userMessage: `${protection.message}${admin ? " Tick the confirmation to move them there anyway." : " Only an admin can confirm that."}`,
      details: { lessProtected: protection.lessProtected },
    });
    await failed(e);
    throw e;
  }
  if (lessProtected) await authorize(actor, "masking:manage", { ...base, meta });
  const params: RedriveParams = lessProtected
    ? { redrive: true, lessProtectedConfirmedBy: actor.email }
    : { redrive: true };

  const started = await startLedgerJob(actor, meta, {
    kind: "redrive",
    action: "redrive.start",
    connectionId: p.connectionId,
    queue: p.queue,
    params: params as unknown as Prisma.InputJsonObject,
    build: async (tx, jobId) => {
      const n = await populateLedger(tx, jobId, filter, letterIds);
      assertConfirmedCount(n, p.confirmedCount, "preview");
      const plan = await tx.redrivePlan.create({
        data: {
          ...ledgerPlanFields(jobId, p, n, actor),
          target: p.target as Prisma.InputJsonObject,
          fix: p.fix,
          sampleSize: sampleCount(p.sample, n),
          watchSeconds: p.watchSeconds,
          rate: p.rate,
          redriveLimit: p.redriveLimit,
          parking: p.parking as Prisma.InputJsonObject,
          breakerThreshold: p.breakerThreshold,
          breakerWindow: p.breakerWindow,
          breakerMinLetters: p.breakerMinLetters,
          ...(p.repair ? { repair: p.repair as unknown as Prisma.InputJsonObject } : {}),
        },
      });
      return { plan, progress: { stage: "sample", read: 0, total: n, pending: n } };
    },
    failed,
    details: (plan) => ({
      fix: p.fix,
      count: plan.total,
      scope: describeSelection(p.selection),
      selection: p.selection,
      target: p.target,
      sampleSize: plan.sampleSize,
      watchSeconds: p.watchSeconds,
      rate: p.rate,
      redriveLimit: p.redriveLimit,
      parking: p.parking,
      breakerThreshold: p.breakerThreshold,
      breakerWindow: p.breakerWindow,
      acceptRisk: p.acceptRisk,
      repair: p.repair ? repairSummary(p.repair) : null,
      lessProtectedTarget: lessProtected ? { confirmed: true, destinations: protection.lessProtected } : null,
    }),
  });
  return toView(started.job, started.plan, actor);
}

const reasonSchema = z.string().trim().min(3, "Give a reason of at least 3 characters.").max(2000);
const bulkSchema = z.object({
  jobId: z.string(),
  overrideReason: reasonSchema.optional(),
  continueAnywayReason: reasonSchema.optional(),
});

/**
 * Stage 2. After a clean sample, as it is. After a sample that returned letters: redrive:override
 * (admin) and a stated reason. After an inconclusive one (nothing shows a reader took the copies):
 * "continue anyway" with a stated reason, audited `redrive.continue_anyway` with the evidence. The
 * start itself is audited `redrive.bulk_start`.
 */
export async function startBulk(actor: Actor, meta: RequestMeta, input: unknown): Promise<RedriveView> {
  const raw = (input ?? {}) as Record<string, unknown>;
  const scope = jobScope(input, "redrive.bulk_start");
  if (raw.overrideReason !== undefined) await authorize(actor, "redrive:override", { ...scope, meta });
  await authorize(actor, "redrive:bulk", { ...scope, meta });
  const p = parseInput(bulkSchema, input, "bad_request:redrive");
  const { job, plan } = await loadRedrive(p.jobId);
  // The rest of a repairing redrive repairs letters too: the same permission as starting one.
  if (plan.repair)
    await authorize(actor, "letter:repair", { ...scope, connectionId: job.connectionId, queue: job.queue, meta });
  return auditedOp(
    actor,
    meta,
    job,
    scope.action,
    async () => {
      if (job.state !== "paused" || plan.stage !== "awaiting_bulk") {
        throw new AppError("conflict:redrive", {
          userMessage:
            plan.stage === "bulk" || plan.stage === "done"
              ? "The rest of this redrive has already been started."
              : "The sample is not done yet: wait for its verdict.",
        });
      }
      const verdict = plan.sampleVerdict;
      const clean = verdict === "clean";
      const evidence = sampleWatchOf(plan.sampleWatch)?.evidence ?? [];
      let reason: string | null = null;
      if (verdict === "returned") {
        if (!p.overrideReason) {
          throw new AppError(
            can(actor.role, "redrive:override") ? "bad_request:override-reason" : "forbidden:redrive:override",
            {
              userMessage: `The sample returned ${plan.sampleReturned} letter${plan.sampleReturned === 1 ? "" : "s"}. Starting the rest anyway needs an admin${can(actor.role, "redrive:override") ? " and a reason" : ""}.`,
            },
          );
        }
        reason = p.overrideReason;
      } else if (!clean) {
        reason = p.continueAnywayReason ?? p.overrideReason ?? null;
        if (!reason) {
          const seen = evidenceLine(evidence);
          throw new AppError("bad_request:continue-reason", {
            userMessage: `The sample was inconclusive: nothing shows a reader took its letters${seen ? ` (${seen})` : ""}. Continuing anyway needs a reason.`,
          });
        }
      }
      if (!(await startBulkStage(getDb(), job.id, actor.email, reason))) {
        const now = await loadRedrive(job.id);
        throw new AppError("conflict:redrive", {
          userMessage:
            now.plan.stage === "bulk" || now.plan.stage === "done"
              ? "The rest of this redrive has already been started."
              : "This redrive changed meanwhile (cancelled?); reload it.",
        });
      }
      if (!clean && verdict !== "returned") {
        await recordAudit(
          jobActEntry(actor, meta, job, "redrive.continue_anyway", "success", {
            jobId: job.id,
            verdict,
            reason,
            evidence,
          }),
        );
      }
      wakeJobWorker();
      const r = await loadRedrive(job.id);
      return toView(r.job, r.plan, actor);
    },
    (v) => ({
      jobId: v.id,
      verdict: plan.sampleVerdict,
      cleanSample: plan.sampleVerdict === "clean",
      overrideReason: plan.sampleVerdict === "returned" ? (p.overrideReason ?? null) : null,
      continueAnywayReason:
        plan.sampleVerdict !== "clean" && plan.sampleVerdict !== "returned"
          ? (p.continueAnywayReason ?? p.overrideReason ?? null)
          : null,
      pending: (v.progress.pending as number) ?? null,
    }),
  );
}

const idSchema = z.object({ jobId: z.string() });

type Loaded = Awaited<ReturnType<typeof loadRedrive>>;

/**
 * The shape every job control shares (pause, resume, cancel): authorize first (so a refused caller
 * is audited whatever it sent), parse, load, then act and audit under the job's operation id.
 */
async function controlRedrive(
  actor: Actor,
  meta: RequestMeta,
  input: unknown,
  action: string,
  act: (loaded: Loaded) => Promise<void>,
  details: (v: RedriveView, loaded: Loaded) => Record<string, unknown>,
): Promise<RedriveView> {
  const scope = jobScope(input, action);
  await authorize(actor, "redrive:sample", { ...scope, meta });
  const { jobId } = parseInput(idSchema, input, "bad_request:redrive");
  const loaded = await loadRedrive(jobId);
  const { job } = loaded;
  return auditedOp(
    actor,
    meta,
    job,
    action,
    async () => {
      await act(loaded);
      const r = await loadRedrive(job.id);
      return toView(r.job, r.plan, actor);
    },
    (v) => details(v, loaded),
  );
}

/** Pauses at the next batch (or during the watch). Audited `redrive.pause`. */
export async function pauseRedrive(actor: Actor, meta: RequestMeta, input: unknown): Promise<RedriveView> {
  return controlRedrive(
    actor,
    meta,
    input,
    "redrive.pause",
    async ({ job }) => {
      // Paused because its broker went away: pinned, it no longer resumes by itself.
      if (
        job.state === "paused" &&
        (await pinPaused(
          getDb(),
          job.id,
          `Paused by ${actor.email} (after the broker could not be reached); it waits for a resume.`,
        ))
      )
        return;
      if (!["queued", "running"].includes(job.state))
        throw new AppError("conflict:redrive", {
          userMessage: `This redrive is ${job.state}; only a running one can be paused.`,
        });
      await requestPause(getDb(), job.id, `Paused by ${actor.email}.`);
    },
    (v) => ({ jobId: v.id, state: v.state }),
  );
}

/**
 * Resumes a paused redrive (operator pause, breaker, broker outage). After a breaker trip the
 * window starts afresh. A sample awaiting its decision is continued with startBulk instead.
 */
export async function resumeRedrive(actor: Actor, meta: RequestMeta, input: unknown): Promise<RedriveView> {
  return controlRedrive(
    actor,
    meta,
    input,
    "redrive.resume",
    async ({ job, plan }) => {
      if (plan.stage === "awaiting_bulk")
        throw new AppError("conflict:redrive", {
          userMessage: "The sample is done: start the rest (stage 2) instead of resuming.",
        });
      if (job.state === "running" && plan.pauseRequested) {
        await getDb().redrivePlan.update({
          where: { jobId: job.id },
          data: { pauseRequested: false, pauseReason: null },
        });
      } else if (!(await resumeJob(getDb(), job.id, { resetBreaker: true }))) {
        throw new AppError("conflict:redrive", {
          userMessage: `This redrive is ${job.state}; only a paused one can be resumed.`,
        });
      }
      wakeJobWorker();
    },
    (v, { plan }) => ({ jobId: v.id, state: v.state, previousReason: plan.pauseReason }),
  );
}

/** Cancels: queued or paused at once, running at its next batch. Letters not yet moved stay in the DLQ, untouched. Audited `redrive.cancel`. */
export async function cancelRedrive(actor: Actor, meta: RequestMeta, input: unknown): Promise<RedriveView> {
  return controlRedrive(
    actor,
    meta,
    input,
    "redrive.cancel",
    async ({ job, plan }) => {
      // A paused job whose broken batch left letters to look for (leftover_check) is ended by a
      // worker, which removes those DLQ copies first; any other paused job is cancelled at once.
      const cleanup = job.state === "paused" && (await hasLeftovers(getDb(), job.id));
      await cancelLedgerJob(job, plan, {
        finishedAction: "redrive.finished",
        result: async (tx) => redriveResult(await countStates(tx, job.id)),
        runPaused: cleanup,
      });
      if (cleanup) wakeJobWorker();
    },
    (v) => ({ jobId: v.id, state: v.state, progress: v.progress }),
  );
}

const ledgerQuery = ledgerQuerySchema(LEDGER_STATES);

/** One redrive with its progress, counts per ledger state, and a keyset page of its ledger (index order). */
export async function getRedrive(
  actor: Actor,
  meta: RequestMeta,
  input: unknown,
): Promise<{ redrive: RedriveView; counts: Record<string, number>; ledger: LedgerRow[]; nextAfter: number | null }> {
  await authorize(actor, "redrive:read", { ...jobScope(input, "redrive.view"), meta });
  const q = parseInput(ledgerQuery, input, "bad_request:redrive");
  const { job, plan } = await loadRedrive(q.jobId);
  const read = await readLedger(actor.role, job, {
    counts: (): Promise<Record<string, number>> => countStates(getDb(), job.id),
    page: () => ledgerPage(getDb(), job.id, { afterSeq: q.after, limit: q.limit, state: q.state }),
  });
  return { redrive: toView(job, plan, actor), ...read };
}

/** Redrives, newest first (at most 50), optionally of one DLQ. */
export function listRedrives(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId?: string; queue?: string },
): Promise<RedriveView[]> {
  return listLedgerJobs(actor, meta, redrivesFor(actor), input);
}

/** The redrive list as `actor` reads it (a repair's patch values only for letter:repair). */
function redrivesFor(actor: Actor): LedgerJobList<RedriveView> {
  return {
    kind: "redrive",
    permission: "redrive:read",
    action: "redrive.list",
    views: (jobs) =>
      withPlans(
        jobs,
        (ids) => getDb().redrivePlan.findMany({ where: { jobId: { in: ids } } }),
        (j, p) => toView(j, p, actor),
      ),
  };
}

/**
 * Redrives newest first, one keyset page at a time (the API's list); listRedrives, which the pages
 * use, is unchanged. Same permission and refusal audit (`redrive.list`).
 */
export function listRedrivePage(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId?: string; queue?: string; cursor?: string; limit: number },
): Promise<{ items: RedriveView[]; nextCursor: string | null }> {
  return listLedgerJobPage(actor, meta, redrivesFor(actor), input);
}

/**
 * A repair as the audit log records it: the patch's kind and the paths it touches, and the reason;
 * never the values, which may be as sensitive as the payload (the per-letter rows carry the diff,
 * masked for every audit reader).
 */
function repairSummary(r: RedriveRepair): Record<string, unknown> {
  const p = r.patch;
  if (p.kind === "json-patch") {
    return {
      reason: r.reason,
      patch: "json-patch",
      operations: p.operations.map((o) => ({
        op: o.op,
        path: o.path,
        ...(o.from !== undefined ? { from: o.from } : {}),
      })),
    };
  }
  const keys =
    p.patch !== null && typeof p.patch === "object" && !Array.isArray(p.patch)
      ? Object.keys(p.patch).slice(0, 100)
      : [];
  return { reason: r.reason, patch: "merge-patch", topLevelKeys: keys };
}
