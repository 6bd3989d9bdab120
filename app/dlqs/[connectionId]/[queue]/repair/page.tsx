import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { DlqCrumbs, ProblemPage } from "@/components/jobs/dlq-page";
import { GroupRepairForm } from "@/components/repair-group/group-repair-form";
import { groupRepairHref } from "@/components/repair-group/links";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadConfig } from "@/lib/config";
import { decodeParam } from "@/lib/dlq/links";
import { repairEnabled } from "@/lib/repair/policy";
import { selectedGroup } from "@/lib/redrive/selected-group";
import { selectionFromSearch } from "@/lib/redrive/ui-format";
import { redrivesHref } from "@/lib/redrive/ui-links";
import { planRedrive, type RedrivePreview } from "@/lib/redrive/use-cases";
import { asAppError } from "@/lib/errors";
import { triageHref } from "@/lib/triage/view-params";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Repair a group" };

type Params = { connectionId: string; queue: string };
type Search = Record<string, string | string[] | undefined>;

/**
 * Group repair, reached from a triage group (?group=<key>): one JSON Patch or merge
 * patch previewed over every letter of the group, then started as a redrive that repairs each
 * letter (sample, watch, the rest at a rate, the ledger). Admins only, where the console's `repair`
 * switch covers the DLQ. No loading.tsx wraps this segment: a refusal must answer 403 before
 * anything streams (lib/auth/authorize-page.ts).
 */
export default async function GroupRepairPage({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const search = await searchParams;
  const parsed = selectionFromSearch(search);
  const group = typeof search.group === "string" ? search.group : "";
  const actor = await requirePageActor(
    groupRepairHref(connectionId, queue, group ? `?group=${encodeURIComponent(group)}` : ""),
  );
  const meta = await requestMeta();
  // Audited as the preview the page exists for (redrive.repair_preview); 403 through ./forbidden.tsx.
  await authorizePage(actor, "letter:repair", { action: "redrive.repair_preview", connectionId, queue, meta });

  const back = parsed.ok ? triageHref(connectionId, queue, parsed.view) : triageHref(connectionId, queue);
  const crumbs = (
    <DlqCrumbs connectionId={connectionId} queue={queue}>
      <Link href={redrivesHref(connectionId, queue)}>redrives</Link> / repair a group
    </DlqCrumbs>
  );
  const problem = (title: string, message: string, testId?: string) => (
    <ProblemPage
      crumbs={crumbs}
      title={title}
      message={message}
      back={{ href: back, label: "← Back to triage" }}
      testId={testId}
    />
  );

  // Checked before anything is counted, so opening the page on a DLQ the switch leaves off reads nothing.
  if (!repairEnabled(loadConfig().repair, connectionId, queue)) {
    return problem(
      "Repair is not enabled for this DLQ.",
      "Repair and resubmit is off by default. The console's configuration (repair: a list of connection and DLQ patterns) names the DLQs where admins may use it; this one is not among them. Nothing was read or changed.",
      "repair-disabled",
    );
  }
  if (!parsed.ok) return problem("This link's selection is not valid.", parsed.message);
  if (parsed.selection.kind !== "group")
    return problem(
      "Open this page from a group.",
      "A group repair applies one patch to the letters of one triage group: choose Repair… on the group's row in triage.",
      "repair-group-problem",
    );

  let preview: RedrivePreview;
  let groupLabel: string | null = null;
  let origins: string[] = [];
  try {
    // The count as the redrive will count it (planRedrive, audited redrive.plan), before any patch is typed.
    preview = await planRedrive(actor, meta, {
      connectionId,
      queue,
      selection: parsed.selection,
      target: { kind: "origin" },
    });
    const g = await selectedGroup(actor, meta, { connectionId, queue }, parsed.selection);
    groupLabel = g?.label ?? null;
    origins = g?.origins ?? [];
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return problem(
      err.type === "forbidden" ? "Your role does not allow this." : "The group could not be counted.",
      err.userMessage,
      "repair-group-problem",
    );
  }

  return (
    <main className="page redrive-page">
      {crumbs}
      <div className="page-head">
        <h1>Repair a group</h1>
        <span className="meta">
          One patch for every letter of the group, previewed letter by letter, then sent as a redrive: a sample first,
          then the rest at a rate. Each original is archived (encrypted) before it leaves{" "}
          <span className="mono">{queue}</span>; a letter the patch does not fit stays there, with the reason.
        </span>
      </div>
      <GroupRepairForm
        connectionId={connectionId}
        queue={queue}
        selection={parsed.selection}
        initial={preview}
        groupLabel={groupLabel}
        origins={origins}
        backHref={back}
      />
    </main>
  );
}
