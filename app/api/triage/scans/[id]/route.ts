import { getScan } from "@/lib/triage/use-cases";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** One scan with its progress (poll it for the progress bar). */
export const GET = sessionRoute<{ id: string }>(({ actor, meta, params }) =>
  getScan(actor, meta, { jobId: params.id }),
);
