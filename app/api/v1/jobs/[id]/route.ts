import { operationRoute } from "@/lib/api/route";
import { getJobOperation } from "@/lib/api/v1";
import { getJob, toJobView } from "@/lib/jobs/use-cases";

export const dynamic = "force-dynamic";

/** One background job, if the role may read its kind (else 404, audited `job.view` denied). */
export const GET = operationRoute(
  getJobOperation,
  { permission: "dlq:list", action: "job.view" },
  async ({ actor, meta, params }) => toJobView(await getJob(actor, meta, params.id)),
);
