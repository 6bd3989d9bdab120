import { operationRoute } from "@/lib/api/route";
import { issueFilterOf, listIssuesOperation, toIssueList } from "@/lib/api/v1";
import { listIssues } from "@/lib/issues/use-cases";

export const dynamic = "force-dynamic";

/** Failure groups across DLQs with their state (lib/api/v1/issues.ts); listIssues masks titles for the role. */
export const GET = operationRoute(
  listIssuesOperation,
  { permission: "triage:read", action: "issue.list" },
  async ({ actor, meta, query }) => toIssueList(await listIssues(actor, meta, issueFilterOf(query))),
);
