import { jobControlRoute } from "@/lib/use-case/http";
import { cancelScan } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** Asks the scan to stop at its next batch; returns the scan (state cancelling or cancelled). */
export const POST = jobControlRoute(cancelScan);
