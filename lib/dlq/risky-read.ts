import "server-only";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { DlqSummary, ReadRisk } from "@/lib/brokers/contract/dlq";
import type { SafeMovePlan } from "@/lib/brokers/contract/safe-move";
import { AppError, toActionError } from "@/lib/errors";
import { jobStore } from "@/lib/jobs/store";
import { listSafeMoves, planSafeMove, type SafeMoveView } from "@/lib/safety/use-cases";
import type { ReadLoss } from "@/lib/triage/read-watch";
import { startScan, toScanView, type ScanView } from "@/lib/triage/use-cases";
import { audited } from "@/lib/use-case/audited";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";

export interface DlqRef {
  connectionId: string;
  queue: string;
}

/**
 * What the page of a DLQ whose reads cost letters shows instead of reading it: the risk, the
 * snapshot its pages are served from (the latest read into the triage index) and what that read
 * cost, the move to safety its broker offers, and what the actor may do. Reads no letter.
 */
export interface RiskyReadView {
  risk: ReadRisk;
  /** The latest read of this DLQ (a scan, any state); null when the console never read it. */
  lastRead: ScanView | null;
  /** The latest read that finished: every page, letter and group of the DLQ is served from it. */
  snapshot: ScanView | null;
  /** What `lastRead` cost, measured after it (null while it runs, or for reads without a measure). */
  readLoss: ReadLoss | null;
  safeMove: { plan: SafeMovePlan | null; problem: string | null; latest: SafeMoveView | null };
  canRead: boolean;
  canMove: boolean;
}

export async function riskyReadView(
  actor: Actor,
  meta: RequestMeta,
  ref: DlqRef & { risk: ReadRisk },
): Promise<RiskyReadView> {
  await authorize(actor, "dlq:browse", { action: "dlq.open", ...ref, meta });
  const scans = (await jobStore().list({ kind: "scan", ...ref }, 20)).map(toScanView);
  const lastRead = scans[0] ?? null;
  const snapshot = scans.find((s) => s.state === "succeeded") ?? null;
  let plan: SafeMovePlan | null = null;
  let problem: string | null = null;
  try {
    plan = await planSafeMove(actor, meta, ref);
  } catch (e) {
    problem = toActionError(e).message;
  }
  const [latest] = await listSafeMoves(actor, meta, ref, 1);
  return {
    risk: ref.risk,
    lastRead,
    snapshot,
    readLoss: ((lastRead?.progress as { readLoss?: ReadLoss } | undefined)?.readLoss ?? null) as ReadLoss | null,
    safeMove: { plan, problem, latest: latest ?? null },
    canRead: can(actor.role, "dlq:browse-risky") && can(actor.role, "triage:scan"),
    canMove: plan !== null && can(actor.role, "dlq:safe-move"),
  };
}

/** What another read would cost, from the snapshot: letters it would push past the limit, when the snapshot says. */
export function projectedLoss(view: Pick<RiskyReadView, "snapshot">): number | null {
  return ((view.snapshot?.progress as { readLoss?: ReadLoss } | undefined)?.readLoss?.lostByNextRead ?? null) as
    | number
    | null;
}

/**
 * One confirmed act, one read: reads the DLQ once into the snapshot (a scan with the risk
 * accepted). Nothing is remembered: the next read is another confirmation. Needs dlq:browse-risky
 * and triage:scan; audited `dlq.read_risky_confirmed` with the risk and what the snapshot said the
 * read would cost, and the scan itself `triage.scan_start`.
 */
export async function readRiskyOnce(
  actor: Actor,
  meta: RequestMeta,
  input: DlqRef,
): Promise<{ scan: ScanView; alreadyActive: boolean }> {
  const scope = { action: "dlq.read_risky_confirmed", connectionId: input.connectionId, queue: input.queue };
  await authorize(actor, "dlq:browse-risky", { ...scope, meta });
  await authorize(actor, "triage:scan", { ...scope, meta });
  return audited(
    actor,
    meta,
    scope,
    async () => {
      const dlq: DlqSummary = await withTimeout(
        adapterFor(input.connectionId).describeDlq(input.queue),
        30_000,
        "describeDlq",
      );
      if (!dlq.readRisk)
        throw new AppError("conflict:no-risk", {
          userMessage: "This DLQ has no read risk any more; open it normally.",
        });
      const previous = (await jobStore().list({ kind: "scan", ...input, states: ["succeeded"] }, 1)).map(toScanView);
      const projected = projectedLoss({ snapshot: previous[0] ?? null });
      const started = await startScan(actor, meta, { ...input, acceptRisk: true });
      return { ...started, risk: dlq.readRisk, projected, depth: dlq.depth };
    },
    (r) => ({
      risk: r.risk.kind,
      limit: r.risk.limit ?? null,
      message: r.risk.message,
      depth: r.depth,
      projectedLoss: r.projected,
      jobId: r.scan.id,
      alreadyActive: r.alreadyActive,
    }),
  ).then(({ scan, alreadyActive }) => ({ scan, alreadyActive }));
}
