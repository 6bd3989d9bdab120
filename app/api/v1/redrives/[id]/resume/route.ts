import { operationRoute } from "@/lib/api/route";
import { asRedrive, resumeRedriveOperation } from "@/lib/api/v1";
import { resumeRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** Resumes a redrive (lib/api/v1/redrives.ts); resumeRedrive authorizes again and audits `redrive.resume` under the redrive's id. */
export const POST = operationRoute(
  resumeRedriveOperation,
  { permission: "redrive:sample", action: "redrive.resume" },
  async ({ actor, meta, params }) => asRedrive(await resumeRedrive(actor, meta, { jobId: params.id })),
);
