import { listRedrives, startRedrive } from "@/lib/redrive/use-cases";
import { jsonBody, ok, sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Redrives, newest first: ?connectionId=&queue= (both optional). */
export const GET = sessionRoute(({ actor, meta, search }) =>
  listRedrives(actor, meta, {
    connectionId: search.get("connectionId") ?? undefined,
    queue: search.get("queue") ?? undefined,
  }),
);

/** Starts a redrive (stage 1, the sample): the plan with `fix` and `confirmedCount` → 202 RedriveView. */
export const POST = sessionRoute(async ({ req, actor, meta }) =>
  ok(await startRedrive(actor, meta, await jsonBody(req).catch(() => ({}))), 202),
);
