import { NextResponse } from "next/server";

export const dynamic = "force-dynamic";

/**
 * Liveness, unauthenticated: the process answers. It reads no database and asks no broker, so an
 * orchestrator never restarts a healthy console because something it depends on is down; whether
 * it can serve is /api/ready.
 */
export function GET() {
  return NextResponse.json({ status: "ok" }, { headers: { "Cache-Control": "no-store" } });
}
