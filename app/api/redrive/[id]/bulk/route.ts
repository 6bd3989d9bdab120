import { startBulk } from "@/lib/redrive/use-cases";
import { jsonBody, sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/**
 * Starts stage 2: {} after a clean sample; { continueAnywayReason } after an inconclusive one (the
 * sample's copies were not seen taken by a reader); { overrideReason } (admin) after one that came back. → RedriveView.
 */
export const POST = sessionRoute<{ id: string }>(async ({ req, actor, meta, params }) =>
  startBulk(actor, meta, { ...(await jsonBody(req).catch(() => ({}))), jobId: params.id }),
);
