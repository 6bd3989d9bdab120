import { jobControlRoute } from "@/lib/dlq/http";
import { pauseRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** Pauses at the next batch. → RedriveView. */
export const POST = jobControlRoute(pauseRedrive);
