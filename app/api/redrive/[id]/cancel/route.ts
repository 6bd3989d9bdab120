import { jobControlRoute } from "@/lib/use-case/http";
import { cancelRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** Cancels; letters not yet moved stay in the DLQ. → RedriveView. */
export const POST = jobControlRoute(cancelRedrive);
