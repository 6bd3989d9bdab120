import { NextResponse } from "next/server";
import { checkHealth } from "@/lib/operations/health";

export const dynamic = "force-dynamic";

/** Unauthenticated liveness for load balancers: reachability only, no hosts, URLs or secrets. */
export async function GET() {
  try {
    const h = await checkHealth();
    return NextResponse.json(h, { status: h.status === "down" ? 503 : 200, headers: { "Cache-Control": "no-store" } });
  } catch (e) {
    console.error("health check failed", e);
    return NextResponse.json({ status: "down" }, { status: 503, headers: { "Cache-Control": "no-store" } });
  }
}
