import { viewDlqOperations } from "@/lib/operations/use-cases";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** One DLQ's figures and chart series (?connectionId=&queue=&range=hour|day|week); polled by its health page. */
export const GET = sessionRoute(({ actor, meta, search }) =>
  viewDlqOperations(actor, meta, {
    connectionId: search.get("connectionId") ?? "",
    queue: search.get("queue") ?? "",
    // Checked by the use case (zod) like the rest of the input: an unknown range is a bad request.
    range: (search.get("range") ?? undefined) as "hour" | "day" | "week" | undefined,
  }),
);
