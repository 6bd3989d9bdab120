import { viewOverview } from "@/lib/operations/use-cases";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Every sampled DLQ's figures, needs attention first; polled by the DLQ list. */
export const GET = sessionRoute(({ actor, meta }) => viewOverview(actor, meta));
