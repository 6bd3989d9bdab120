import { operationRoute } from "@/lib/api/route";
import { getJobLedgerOperation } from "@/lib/api/v1";
import { getDiscard } from "@/lib/discard/use-cases";
import { AppError } from "@/lib/errors";
import { getJob } from "@/lib/jobs/use-cases";
import { getRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/**
 * A redrive's or a discard's ledger by cursor (lib/api/v1/jobs.ts), read through the kind's own use
 * case so its permission, its refusal audit and the masking of digests apply. The cursor is the
 * last row's seq, as the pages' `after`.
 */
export const GET = operationRoute(
  getJobLedgerOperation,
  { permission: "dlq:list", action: "job.ledger" },
  async ({ actor, meta, params, query }) => {
    const job = await getJob(actor, meta, params.id);
    const input = { jobId: job.id, after: query.cursor, limit: query.limit, state: query.state };
    const page =
      job.kind === "redrive"
        ? await getRedrive(actor, meta, input)
        : job.kind === "discard"
          ? await getDiscard(actor, meta, input)
          : null;
    if (!page)
      throw new AppError("not_found:ledger", {
        userMessage: `A ${job.kind} job keeps no ledger; only redrives and discards do.`,
      });
    return {
      jobId: job.id,
      kind: job.kind as "redrive" | "discard",
      items: page.ledger,
      nextCursor: page.nextAfter === null ? null : String(page.nextAfter),
    };
  },
);
