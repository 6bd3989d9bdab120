import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { SafeMovePlan } from "@/lib/brokers/contract/safe-move";
import { audited } from "@/lib/use-case/audited";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";
import { AppError } from "@/lib/errors";
import { wakeJobWorker } from "@/lib/jobs/process-worker";
import { jobStore } from "@/lib/jobs/store";
import type { JobRecord, JobState } from "@/lib/jobs/types";
import type { SafeMoveParams, SafeMoveProgress } from "./handler";

export interface DlqRef {
  connectionId: string;
  queue: string;
}

export interface SafeMoveView {
  id: string;
  state: JobState;
  target: string;
  moved: number;
  failed: number;
  total: number | null;
  dlqDepthAfter: number | null;
  targetDepthAfter: number | null;
  error: string | null;
  createdAt: string;
  finishedAt: string | null;
}

function toView(j: JobRecord): SafeMoveView {
  const p = (j.progress ?? {}) as Partial<SafeMoveProgress>;
  return {
    id: j.id,
    state: j.state as JobState,
    target: (j.params as unknown as SafeMoveParams).target,
    moved: p.moved ?? 0,
    failed: p.failed ?? 0,
    total: p.total ?? null,
    dlqDepthAfter: p.dlqDepthAfter ?? null,
    targetDepthAfter: p.targetDepthAfter ?? null,
    error: j.error,
    createdAt: j.createdAt.toISOString(),
    finishedAt: j.finishedAt?.toISOString() ?? null,
  };
}

/** How this DLQ's letters would be moved to safety, or null where its broker cannot. Reads no letter. */
export async function planSafeMove(actor: Actor, meta: RequestMeta, ref: DlqRef): Promise<SafeMovePlan | null> {
  await authorize(actor, "dlq:browse", { action: "dlq.safe_move_plan", ...ref, meta });
  const adapter = adapterFor(ref.connectionId);
  if (!adapter.safeMove) return null;
  return withTimeout(adapter.safeMove.plan(ref.queue), 15_000, "planSafeMove");
}

/** The latest moves to safety of this DLQ, newest first. */
export async function listSafeMoves(actor: Actor, meta: RequestMeta, ref: DlqRef, limit = 5): Promise<SafeMoveView[]> {
  await authorize(actor, "dlq:browse", { action: "dlq.safe_move_list", ...ref, meta });
  return (await jobStore().list({ kind: "safe-move", ...ref }, limit)).map(toView);
}

/**
 * Starts moving every letter of a risky DLQ to the queue where reading is safe. The operator
 * confirms the target the plan named (`target`): a plan that changed since is refused, nothing
 * moves. Audited `dlq.safe_move_start`, operation id = job id (its letters are audited under it).
 */
export async function startSafeMove(
  actor: Actor,
  meta: RequestMeta,
  input: DlqRef & { target: string },
): Promise<SafeMoveView> {
  const scope = { action: "dlq.safe_move_start", connectionId: input.connectionId ?? null, queue: input.queue ?? null };
  await authorize(actor, "dlq:safe-move", { ...scope, meta });
  return audited(
    actor,
    meta,
    scope,
    async () => {
      const adapter = adapterFor(input.connectionId);
      if (!adapter.safeMove) {
        throw new AppError("bad_request:safe-move", {
          userMessage: `${adapter.displayName} cannot move letters to safety; read the DLQ once into a snapshot instead.`,
        });
      }
      const plan = await withTimeout(adapter.safeMove.plan(input.queue), 15_000, "planSafeMove");
      if (plan.target !== input.target) {
        throw new AppError("conflict:safe-move", {
          userMessage: `The safe queue is now "${plan.target}", not "${input.target}". Nothing was moved; check the plan and confirm again.`,
        });
      }
      const job = await jobStore().enqueue({
        kind: "safe-move",
        ...input,
        params: { target: plan.target },
        createdBy: actor.id,
      });
      wakeJobWorker();
      return { view: toView(job), plan };
    },
    (r) => ({ jobId: r.view.id, target: r.plan.target, depth: r.plan.depth, targetExisted: r.plan.targetExists }),
  ).then((r) => r.view);
}
