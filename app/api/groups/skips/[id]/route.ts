import { viewSkip } from "@/lib/consumer-groups/skip";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** One consumer-group skip job (poll it for progress: waiting for an empty group, the copies, the offsets). */
export const GET = sessionRoute<{ id: string }>(({ actor, meta, params }) =>
  viewSkip(actor, meta, { jobId: params.id }),
);
