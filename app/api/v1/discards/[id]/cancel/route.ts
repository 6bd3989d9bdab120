import { operationRoute } from "@/lib/api/route";
import { asDiscard, cancelDiscardOperation } from "@/lib/api/v1";
import { cancelDiscard } from "@/lib/discard/use-cases";

export const dynamic = "force-dynamic";

/** Cancels a discard (lib/api/v1/discards.ts); cancelDiscard audits `discard.cancel` under the discard's id. */
export const POST = operationRoute(
  cancelDiscardOperation,
  { permission: "discard:run", action: "discard.cancel" },
  async ({ actor, meta, params }) => asDiscard(await cancelDiscard(actor, meta, { jobId: params.id })),
);
