import type { Metadata } from "next";
import { DiscardForm } from "@/components/discard/discard-form";
import { DlqCrumbs, ProblemPage } from "@/components/jobs/dlq-page";
import { archiveRetentionDays } from "@/lib/archive/store";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { planDiscard, type DiscardPreview } from "@/lib/discard/use-cases";
import { newDiscardHref, unindexedFromSearch } from "@/lib/discard/ui-links";
import { asAppError } from "@/lib/errors";
import { decodeParam } from "@/lib/dlq/links";
import { selectedGroup } from "@/lib/redrive/selected-group";
import { selectionFromSearch } from "@/lib/redrive/ui-format";
import { triageHref } from "@/lib/triage/view-params";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Discard letters" };

type Params = { connectionId: string; queue: string };
type Search = Record<string, string | string[] | undefined>;

/** The discard form for a group, a filtered set or hand-picked letters (same query as a new redrive), with the count from planDiscard. Admins only. */
export default async function NewDiscardPage({
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
  const actor = await requirePageActor(newDiscardHref(connectionId, queue));
  const meta = await requestMeta();
  // The server-side check, not only a hidden form; before anything streams, so a refusal answers 403 (./forbidden.tsx), audited as discard.plan.
  await authorizePage(actor, "discard:run", { action: "discard.plan", connectionId, queue, meta });
  const back = parsed.ok ? triageHref(connectionId, queue, parsed.view) : triageHref(connectionId, queue);
  const crumbs = (
    <DlqCrumbs connectionId={connectionId} queue={queue}>
      discard
    </DlqCrumbs>
  );
  const problem = (title: string, message: string) => (
    <ProblemPage crumbs={crumbs} title={title} message={message} back={{ href: back, label: "← Back to triage" }} />
  );
  if (!parsed.ok) return problem("This link's selection is not valid.", parsed.message);
  const unindexed =
    parsed.selection.kind === "letters" ? unindexedFromSearch(search, parsed.selection.letterIds) : null;
  let preview: DiscardPreview;
  let groupLabel: string | null = null;
  try {
    preview = await planDiscard(actor, meta, {
      connectionId,
      queue,
      selection: parsed.selection,
      ...(unindexed ? { unindexed } : {}),
    });
    groupLabel = (await selectedGroup(actor, meta, { connectionId, queue }, parsed.selection))?.label ?? null;
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return problem(
      err.type === "forbidden" ? "Your role does not allow this." : "The discard could not be planned.",
      err.userMessage,
    );
  }
  return (
    <main className="page redrive-page">
      {crumbs}
      <div className="page-head">
        <h1>Discard letters</h1>
        <span className="meta">Letters are archived (encrypted) before they leave the DLQ, then removed.</span>
      </div>
      <DiscardForm
        connectionId={connectionId}
        queue={queue}
        selection={parsed.selection}
        initial={preview}
        groupLabel={groupLabel}
        retentionDays={archiveRetentionDays()}
        backHref={back}
        unindexed={unindexed}
      />
    </main>
  );
}
