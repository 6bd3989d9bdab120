import { operationRoute } from "@/lib/api/route";
import { addIssueLinkOperation, toIssueEvent } from "@/lib/api/v1";
import { addIssueLink } from "@/lib/issues/use-cases";

export const dynamic = "force-dynamic";

/** An http(s) link on a group (201 with the history entry: the URL as text and its host). */
export const POST = operationRoute(
  addIssueLinkOperation,
  { permission: "issues:write", action: "issue.link" },
  async ({ actor, meta, body }) => toIssueEvent(await addIssueLink(actor, meta, body)),
);
