import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { DlqCrumbs, ProblemPage } from "@/components/jobs/dlq-page";
import { RedriveForm } from "@/components/redrive/redrive-form";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { asAppError } from "@/lib/errors";
import { decodeParam } from "@/lib/dlq/links";
import { selectedGroup } from "@/lib/redrive/selected-group";
import { newRedriveHref, redrivesHref } from "@/lib/redrive/ui-links";
import { selectionFromSearch } from "@/lib/redrive/ui-format";
import { planRedrive, type RedrivePreview } from "@/lib/redrive/use-cases";
import { triageHref } from "@/lib/triage/view-params";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "New redrive" };

type Params = { connectionId: string; queue: string };
type Search = Record<string, string | string[] | undefined>;

/** The redrive form for a group, a filtered set or hand-picked letters, with the count from planRedrive. */
export default async function NewRedrivePage({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const parsed = selectionFromSearch(await searchParams);
  const actor = await requirePageActor(newRedriveHref(connectionId, queue));
  const meta = await requestMeta();
  // The server-side check, not only a hidden form; before anything streams, so a refusal answers 403 (./forbidden.tsx), audited as redrive.plan.
  await authorizePage(actor, "redrive:sample", { action: "redrive.plan", connectionId, queue, meta });
  const back = parsed.ok ? triageHref(connectionId, queue, parsed.view) : triageHref(connectionId, queue);
  const crumbs = (
    <DlqCrumbs connectionId={connectionId} queue={queue}>
      <Link href={redrivesHref(connectionId, queue)}>redrives</Link> / new
    </DlqCrumbs>
  );
  const problem = (title: string, message: string) => (
    <ProblemPage crumbs={crumbs} title={title} message={message} back={{ href: back, label: "← Back to triage" }} />
  );
  if (!parsed.ok) return problem("This link's selection is not valid.", parsed.message);
  let preview: RedrivePreview;
  let groupLabel: string | null = null;
  let origins: string[] = [];
  try {
    preview = await planRedrive(actor, meta, {
      connectionId,
      queue,
      selection: parsed.selection,
      target: { kind: "origin" },
    });
    const group = await selectedGroup(actor, meta, { connectionId, queue }, parsed.selection);
    groupLabel = group?.label ?? null;
    origins = group?.origins ?? [];
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return problem(
      err.type === "forbidden" ? "Your role does not allow this." : "The redrive could not be planned.",
      err.userMessage,
    );
  }

  return (
    <main className="page redrive-page">
      {crumbs}
      <div className="page-head">
        <h1>New redrive</h1>
        <span className="meta">Stage 1 redrives a sample and watches it; you start the rest after its verdict.</span>
      </div>
      <RedriveForm
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
