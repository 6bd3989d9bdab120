import { listDlqs } from "@/lib/dlq/list-dlqs";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Every connection's DLQs with depths; polled by the list page. */
export const GET = sessionRoute(({ actor, meta }) => listDlqs(actor, meta));
