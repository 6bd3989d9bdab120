import type { Metadata } from "next";
import Link from "next/link";
import { DiscardJob } from "@/components/discard/discard-job";
import { Problem } from "@/components/ui/problem";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { DISCARD_STATES } from "@/lib/discard/ledger";
import { getDiscard } from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";
import { asAppError } from "@/lib/dlq/app-error";
import { decodeParam, dlqHref } from "@/lib/dlq/links";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Discard" };

type Params = { connectionId: string; queue: string; jobId: string };
type Search = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? "";

/** One discard: live progress, cancel (admins), and its per-letter ledger (state filter and cursor in the URL). */
export default async function DiscardJobPage({ params, searchParams }: { params: Promise<Params>; searchParams: Promise<Search> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const jobId = decodeParam(p.jobId);
  const sp = await searchParams;
  const stateParam = one(sp.state);
  const state = (DISCARD_STATES as readonly string[]).includes(stateParam) ? stateParam : null;
  const afterN = Number.parseInt(one(sp.after), 10);
  const after = Number.isFinite(afterN) && afterN > 0 ? afterN : null;
  const actor = await requirePageActor(discardJobHref(connectionId, queue, jobId, { state, after }));
  const crumbs = (
    <div className="breadcrumbs">
      <Link href="/">DLQs</Link> / {connectionId} / <Link href={dlqHref(connectionId, queue)} className="mono">{queue}</Link> / discard / <span className="mono">{jobId.slice(0, 8)}</span>
    </div>
  );
  let data: Awaited<ReturnType<typeof getDiscard>>;
  try {
    data = await getDiscard(actor, await requestMeta(), { jobId, state: state ?? undefined, after: after ?? undefined, limit: 50 });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return (
      <main className="page">
        {crumbs}
        <Problem title={err.type === "not_found" ? "There is no such discard." : err.type === "forbidden" ? "Your role does not allow this." : "The discard could not be read."} back={{ href: dlqHref(connectionId, queue), label: "← Back to the DLQ" }}>
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  if (data.discard.connectionId !== connectionId || data.discard.queue !== queue) {
    return (
      <main className="page">
        {crumbs}
        <Problem title="This discard belongs to another DLQ." back={{ href: discardJobHref(data.discard.connectionId, data.discard.queue, jobId), label: "→ Open it there" }} />
      </main>
    );
  }
  return (
    <main className="page redrive-page">
      {crumbs}
      <DiscardJob initial={data} ledgerState={state} after={after} canCancel={can(actor.role, "discard:run")} groupLabel={null} />
    </main>
  );
}
