import type { Metadata } from "next";
import Link from "next/link";
import { RedriveForm } from "@/components/redrive/redrive-form";
import { Problem } from "@/components/ui/problem";
import { authorize } from "@/lib/auth/authorize";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { asAppError } from "@/lib/dlq/app-error";
import { decodeParam, dlqHref } from "@/lib/dlq/links";
import { truncate } from "@/lib/format";
import { newRedriveHref, redrivesHref } from "@/lib/redrive/ui-links";
import { selectionFromSearch } from "@/lib/redrive/ui-format";
import { listGroups } from "@/lib/triage/use-cases";
import { planRedrive, type RedrivePreview } from "@/lib/redrive/use-cases";
import { triageHref } from "@/lib/triage/view-params";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "New redrive" };

type Params = { connectionId: string; queue: string };
type Search = Record<string, string | string[] | undefined>;

/** The redrive form for a group, a filtered set or hand-picked letters, with the count from planRedrive. */
export default async function NewRedrivePage({ params, searchParams }: { params: Promise<Params>; searchParams: Promise<Search> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const sp = await searchParams;
  const parsed = selectionFromSearch(sp);
  const actor = await requirePageActor(newRedriveHref(connectionId, queue));
  const back = parsed.ok ? triageHref(connectionId, queue, parsed.view) : triageHref(connectionId, queue);
  const crumbs = (
    <div className="breadcrumbs">
      <Link href="/">DLQs</Link> / {connectionId} / <Link href={dlqHref(connectionId, queue)} className="mono">{queue}</Link> / <Link href={redrivesHref(connectionId, queue)}>redrives</Link> / new
    </div>
  );
  const problem = (title: string, message: string, testId?: string) => (
    <main className="page">
      {crumbs}
      <Problem title={title} back={{ href: back, label: "← Back to triage" }} testId={testId}>
        <p>{message}</p>
      </Problem>
    </main>
  );
  if (!parsed.ok) return problem("This link's selection is not valid.", parsed.message);
  const meta = await requestMeta();
  // The server-side check (audited when it refuses), not only a hidden form.
  try {
    await authorize(actor, "redrive:sample", { action: "redrive.plan", connectionId, queue, meta });
  } catch (e) {
    if (asAppError(e)?.type !== "forbidden") throw e;
    return problem("Your role cannot start a redrive.", `Redrives are started by operators and admins; your role (${actor.role}) can follow them on the redrives page.`, "redrive-forbidden");
  }
  let preview: RedrivePreview;
  let groupLabel: string | null = null;
  let origins: string[] = [];
  try {
    preview = await planRedrive(actor, meta, { connectionId, queue, selection: parsed.selection, target: { kind: "origin" } });
    const key = parsed.selection.kind === "group" ? parsed.selection.groupKey : parsed.selection.kind === "filter" ? (parsed.selection.filter.groupKey as string | undefined) : undefined;
    if (key) {
      const groups = await listGroups(actor, meta, { connectionId, queue, by: "group" });
      const g = groups.by === "group" ? groups.groups.find((x) => x.groupKey === key) : undefined;
      if (g) {
        groupLabel = truncate(g.basis === "exception" ? [g.exceptionClass, g.normalizedMessage].filter(Boolean).join(": ") : g.label, 120);
        origins = g.origins;
      }
    }
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return problem(err.type === "forbidden" ? "Your role does not allow this." : "The redrive could not be planned.", err.userMessage);
  }

  return (
    <main className="page redrive-page">
      {crumbs}
      <div className="page-head">
        <h1>New redrive</h1>
        <span className="meta">Stage 1 redrives a sample and watches it; you start the rest after its verdict.</span>
      </div>
      <RedriveForm connectionId={connectionId} queue={queue} selection={parsed.selection} initial={preview} groupLabel={groupLabel} origins={origins} backHref={back} />
    </main>
  );
}
