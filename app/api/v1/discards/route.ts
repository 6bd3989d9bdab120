import { operationRoute } from "@/lib/api/route";
import { asDiscard, listDiscardsOperation, startDiscardOperation } from "@/lib/api/v1";
import { listDiscardPage, startDiscard } from "@/lib/discard/use-cases";

export const dynamic = "force-dynamic";

/** Discards newest first, by cursor (lib/api/v1/discards.ts). */
export const GET = operationRoute(
  listDiscardsOperation,
  { permission: "discard:read", action: "discard.list" },
  async ({ actor, meta, query }) => {
    const page = await listDiscardPage(actor, meta, query);
    return { items: page.items.map(asDiscard), nextCursor: page.nextCursor };
  },
);

/** Starts a discard with its confirmed count and reason → 202; startDiscard counts again and refuses a changed count (409 conflict:count). */
export const POST = operationRoute(
  startDiscardOperation,
  { permission: "discard:run", action: "discard.start" },
  async ({ actor, meta, body }) => asDiscard(await startDiscard(actor, meta, body)),
);
