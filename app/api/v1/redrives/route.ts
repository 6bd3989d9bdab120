import { operationRoute } from "@/lib/api/route";
import { asRedrive, listRedrivesOperation, startRedriveOperation } from "@/lib/api/v1";
import { listRedrivePage, startRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** Redrives newest first, by cursor (lib/api/v1/redrives.ts). */
export const GET = operationRoute(
  listRedrivesOperation,
  { permission: "redrive:read", action: "redrive.list" },
  async ({ actor, meta, query }) => {
    const page = await listRedrivePage(actor, meta, query);
    return { items: page.items.map(asRedrive), nextCursor: page.nextCursor };
  },
);

/** Starts stage 1 with the plan and its confirmed count → 202; startRedrive counts again and refuses a changed count (409 conflict:count). */
export const POST = operationRoute(
  startRedriveOperation,
  { permission: "redrive:sample", action: "redrive.start" },
  async ({ actor, meta, body }) => asRedrive(await startRedrive(actor, meta, body)),
);
