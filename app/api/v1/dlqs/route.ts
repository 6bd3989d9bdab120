import { operationRoute } from "@/lib/api/route";
import { listDlqsOperation, toDlqList } from "@/lib/api/v1";
import { can } from "@/lib/auth/permissions";
import { listDlqs } from "@/lib/dlq/list-dlqs";
import { viewOverview } from "@/lib/operations/use-cases";

export const dynamic = "force-dynamic";

/**
 * Connections and their DLQs with figures (lib/api/v1/dlqs.ts); listDlqs authorizes and audits.
 * The sampler's figures come from the operations overview, which reads every DLQ's status row in
 * one query (and the owners in one more), whatever the number of DLQs; a role without ops:read is
 * not asked for them, so it is never refused, and its DLQs carry `operations: null`.
 */
export const GET = operationRoute(listDlqsOperation, null, async ({ actor, meta }) => {
  const listing = await listDlqs(actor, meta);
  const status = can(actor.role, "ops:read") ? (await viewOverview(actor, meta)).rows : null;
  return toDlqList(listing, status);
});
