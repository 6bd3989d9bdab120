import { jobControlRoute } from "@/lib/use-case/http";
import { pauseRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** Pauses at the next batch. → RedriveView. */
export const POST = jobControlRoute(pauseRedrive);
