import { cancelDiscard } from "@/lib/discard/use-cases";
import { jobControlRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Cancels; letters not yet discarded stay in the DLQ. → DiscardView. */
export const POST = jobControlRoute(cancelDiscard);
