import { apiJson, apiRoute } from "@/lib/api/route";
import { toDlqList } from "@/lib/api/v1";
import { listDlqs } from "@/lib/dlq/list-dlqs";

export const dynamic = "force-dynamic";

/** Connections and their DLQs with figures (lib/api/v1/dlqs.ts). */
export const GET = apiRoute(async (actor, meta) => apiJson(toDlqList(await listDlqs(actor, meta))));
