import { listGroups } from "@/lib/triage/use-cases";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** ?connectionId=&queue=&by=group|origin|reason|class|header:<name> */
export const GET = sessionRoute(({ actor, meta, search }) =>
  listGroups(actor, meta, {
    connectionId: search.get("connectionId") ?? "",
    queue: search.get("queue") ?? "",
    by: search.get("by"),
  }),
);
