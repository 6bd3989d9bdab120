import { operationRoute } from "@/lib/api/route";
import { changeIssueStateOperation, stateChangeOf, toChangedIssue } from "@/lib/api/v1";
import { changeIssueState } from "@/lib/issues/use-cases";

export const dynamic = "force-dynamic";

/** Acknowledge, resolve or ignore one group; changeIssueState validates, audits and masks the answer. */
export const POST = operationRoute(
  changeIssueStateOperation,
  { permission: "issues:write", action: "issue.state_change" },
  async ({ actor, meta, body }) =>
    toChangedIssue(await changeIssueState(actor, meta, { ...body, change: stateChangeOf(body) })),
);
