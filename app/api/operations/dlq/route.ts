import { NextResponse, type NextRequest } from "next/server";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { viewDlqOperations } from "@/lib/operations/use-cases";
import { errorResponse } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** One DLQ's figures and chart series (?connectionId=&queue=&range=hour|day|week); polled by its health page. */
export async function GET(req: NextRequest) {
  try {
    const actor = await requireActor();
    const sp = req.nextUrl.searchParams;
    const data = await viewDlqOperations(actor, await requestMeta(), {
      connectionId: sp.get("connectionId") ?? "",
      queue: sp.get("queue") ?? "",
      // Checked by the use case (zod) like the rest of the input: an unknown range is a bad request.
      range: (sp.get("range") ?? undefined) as "hour" | "day" | "week" | undefined,
    });
    return NextResponse.json({ ok: true, data }, { headers: { "Cache-Control": "no-store" } });
  } catch (e) {
    return errorResponse(e);
  }
}
