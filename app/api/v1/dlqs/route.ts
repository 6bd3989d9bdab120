import { operationRoute } from "@/lib/api/route";
import { listDlqsOperation, toDlqList } from "@/lib/api/v1";
import { listDlqs } from "@/lib/dlq/list-dlqs";

export const dynamic = "force-dynamic";

/** Connections and their DLQs with figures (lib/api/v1/dlqs.ts); listDlqs authorizes and audits. */
export const GET = operationRoute(listDlqsOperation, null, async ({ actor, meta }) => toDlqList(await listDlqs(actor, meta)));
