import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { audited } from "./audit-trail";
import { adapterFor, withTimeout } from "./connection";

export interface ConfirmRiskyReadInput {
  connectionId: string;
  queue: string;
}

/** How long a confirmation lasts; each read in that window still counts as a delivery. */
export const RISK_CONFIRMATION_TTL_S = 10 * 60;

/**
 * The operator accepts that reading this DLQ may cost letters (e.g. quorum delivery limit).
 * Needs dlq:browse-risky; audited `dlq.read_risky_confirmed` with the risk they accepted.
 */
export async function confirmRiskyRead(actor: Actor, meta: RequestMeta, input: ConfirmRiskyReadInput): Promise<{ expiresAt: string }> {
  const scope = { action: "dlq.read_risky_confirmed", connectionId: input.connectionId, queue: input.queue };
  await authorize(actor, "dlq:browse-risky", { ...scope, meta });
  return audited(
    actor,
    meta,
    scope,
    async () => {
      const dlq = await withTimeout(adapterFor(input.connectionId).describeDlq(input.queue), 30_000, "describeDlq");
      if (!dlq.readRisk) {
        throw new AppError("conflict:no-risk", { userMessage: "This DLQ has no read risk any more; open it normally." });
      }
      return { expiresAt: new Date(Date.now() + RISK_CONFIRMATION_TTL_S * 1000).toISOString(), risk: dlq.readRisk };
    },
    (r) => ({ risk: r.risk.kind, limit: r.risk.limit ?? null, message: r.risk.message, expiresAt: r.expiresAt }),
  ).then((r) => ({ expiresAt: r.expiresAt }));
}
