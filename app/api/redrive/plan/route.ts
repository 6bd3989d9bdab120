import { planRedrive } from "@/lib/redrive/use-cases";
import { jsonBody, sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Preview: { connectionId, queue, selection, target? } → { count, scope, target, orderedStream, warnings, nativeMoveNote }. */
export const POST = sessionRoute(async ({ req, actor, meta }) =>
  planRedrive(actor, meta, await jsonBody(req).catch(() => ({}))),
);
