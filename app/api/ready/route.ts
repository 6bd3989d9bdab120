import { NextResponse } from "next/server";
import { readiness } from "@/lib/operations/health";

export const dynamic = "force-dynamic";

/**
 * Readiness, unauthenticated: the database and each broker, each within a timeout
 * (lib/operations/health.ts). 503 when the database does not answer; a broker that does not is
 * named with a code (the console still serves the others). No hosts, URLs or error text.
 */
export async function GET() {
  const headers = { "Cache-Control": "no-store" };
  try {
    const r = await readiness();
    return NextResponse.json(r, { status: r.status === "down" ? 503 : 200, headers });
  } catch (e) {
    console.error("readiness check failed", e);
    return NextResponse.json({ status: "down" }, { status: 503, headers });
  }
}
