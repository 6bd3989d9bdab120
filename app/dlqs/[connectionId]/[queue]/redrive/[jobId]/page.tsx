import type { Metadata } from "next";
import Link from "next/link";
import { RedriveJob } from "@/components/redrive/redrive-job";
import { Problem } from "@/components/ui/problem";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { asAppError } from "@/lib/dlq/app-error";
import { decodeParam, dlqHref } from "@/lib/dlq/links";
import { LEDGER_STATES } from "@/lib/redrive/plan";
import { getRedrive } from "@/lib/redrive/use-cases";
import { truncate } from "@/lib/format";
import { listGroups } from "@/lib/triage/use-cases";
import { redriveJobHref, redrivesHref } from "@/lib/redrive/ui-links";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Redrive" };

type Params = { connectionId: string; queue: string; jobId: string };
type Search = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? "";

/** One redrive: timeline, live progress, controls, verdict, and its ledger (state filter and cursor in the URL). */
export default async function RedriveJobPage({ params, searchParams }: { params: Promise<Params>; searchParams: Promise<Search> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const jobId = decodeParam(p.jobId);
  const sp = await searchParams;
  const stateParam = one(sp.state);
  const state = (LEDGER_STATES as readonly string[]).includes(stateParam) ? stateParam : null;
  const afterN = Number.parseInt(one(sp.after), 10);
  const after = Number.isFinite(afterN) && afterN > 0 ? afterN : null;
  const actor = await requirePageActor(redriveJobHref(connectionId, queue, jobId, { state, after }));
  const crumbs = (
    <div className="breadcrumbs">
      <Link href="/">DLQs</Link> / {connectionId} / <Link href={dlqHref(connectionId, queue)} className="mono">{queue}</Link> / <Link href={redrivesHref(connectionId, queue)}>redrives</Link> /{" "}
      <span className="mono">{jobId.slice(0, 8)}</span>
    </div>
  );
  let data: Awaited<ReturnType<typeof getRedrive>>;
  try {
    data = await getRedrive(actor, await requestMeta(), { jobId, state: state ?? undefined, after: after ?? undefined, limit: 50 });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return (
      <main className="page">
        {crumbs}
        <Problem title={err.type === "not_found" ? "There is no such redrive." : err.type === "forbidden" ? "Your role does not allow this." : "The redrive could not be read."} back={{ href: redrivesHref(connectionId, queue), label: "← All redrives of this DLQ" }}>
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  if (data.redrive.connectionId !== connectionId || data.redrive.queue !== queue) {
    return (
      <main className="page">
        {crumbs}
        <Problem title="This redrive belongs to another DLQ." back={{ href: redriveJobHref(data.redrive.connectionId, data.redrive.queue, jobId), label: "→ Open it there" }} />
      </main>
    );
  }
  const sel = data.redrive.plan.selection as { kind: string; groupKey?: string; filter?: { groupKey?: string } };
  const key = sel.kind === "group" ? sel.groupKey : sel.filter?.groupKey;
  let groupLabel: string | null = null;
  if (key) {
    const groups = await listGroups(actor, await requestMeta(), { connectionId, queue, by: "group" }).catch(() => null);
    const g = groups?.by === "group" ? groups.groups.find((x) => x.groupKey === key) : undefined;
    if (g) groupLabel = truncate(g.basis === "exception" ? [g.exceptionClass, g.normalizedMessage].filter(Boolean).join(": ") : g.label, 120);
  }
  return (
    <main className="page redrive-page">
      {crumbs}
      <RedriveJob
        initial={data}
        ledgerState={state}
        after={after}
        groupLabel={groupLabel}
        role={{ control: can(actor.role, "redrive:sample"), override: can(actor.role, "redrive:override"), name: actor.role }}
      />
    </main>
  );
}
