import { jobControlRoute } from "@/lib/use-case/http";
import { resumeRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** Resumes a paused redrive (breaker window starts afresh). → RedriveView. */
export const POST = jobControlRoute(resumeRedrive);
