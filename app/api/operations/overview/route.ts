import { NextResponse } from "next/server";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { viewOverview } from "@/lib/operations/use-cases";
import { errorResponse } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Every sampled DLQ's figures, needs attention first; polled by the DLQ list. */
export async function GET() {
  try {
    const actor = await requireActor();
    const data = await viewOverview(actor, await requestMeta());
    return NextResponse.json({ ok: true, data }, { headers: { "Cache-Control": "no-store" } });
  } catch (e) {
    return errorResponse(e);
  }
}
