import { operationRoute } from "@/lib/api/route";
import { addIssueNoteOperation, toIssueEvent } from "@/lib/api/v1";
import { addIssueNote } from "@/lib/issues/use-cases";

export const dynamic = "force-dynamic";

/** A note on a group (201 with the history entry, masked for the role). */
export const POST = operationRoute(
  addIssueNoteOperation,
  { permission: "issues:write", action: "issue.note" },
  async ({ actor, meta, body }) => toIssueEvent(await addIssueNote(actor, meta, body)),
);
