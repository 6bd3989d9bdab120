import { NextResponse } from "next/server";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { listDlqs } from "@/lib/dlq/list-dlqs";

export const dynamic = "force-dynamic";

/** Every connection's DLQs with depths; polled by the list page. */
export async function GET() {
  try {
    const actor = await requireActor();
    const data = await listDlqs(actor, await requestMeta());
    return NextResponse.json({ ok: true, data }, { headers: { "Cache-Control": "no-store" } });
  } catch (e) {
    return errorResponse(e);
  }
}
