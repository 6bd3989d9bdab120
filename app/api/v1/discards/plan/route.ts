import { operationRoute } from "@/lib/api/route";
import { planDiscardOperation } from "@/lib/api/v1";
import { planDiscard } from "@/lib/discard/use-cases";

export const dynamic = "force-dynamic";

/** The exact count and scope a discard would have (lib/api/v1/discards.ts); planDiscard audits `discard.plan`. */
export const POST = operationRoute(
  planDiscardOperation,
  { permission: "discard:run", action: "discard.plan" },
  async ({ actor, meta, body }) => planDiscard(actor, meta, body),
);
