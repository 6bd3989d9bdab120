import { operationRoute } from "@/lib/api/route";
import { listJobsOperation, toJobPage } from "@/lib/api/v1";
import type { JobKind } from "@/lib/jobs/types";
import { listJobs } from "@/lib/jobs/use-cases";

export const dynamic = "force-dynamic";

/** Every background job the role may read, by cursor (lib/api/v1/jobs.ts); listJobs applies the per-kind rule. */
export const GET = operationRoute(
  listJobsOperation,
  { permission: "dlq:list", action: "job.list" },
  async ({ actor, meta, query }) =>
    toJobPage(await listJobs(actor, meta, { ...query, kind: query.kind as JobKind | undefined })),
);
