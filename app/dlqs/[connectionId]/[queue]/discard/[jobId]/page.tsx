import type { Metadata } from "next";
import { DiscardJob } from "@/components/discard/discard-job";
import { DlqCrumbs, jobPageParams, readJobForPage } from "@/components/jobs/dlq-page";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { DISCARD_STATES } from "@/lib/discard/ledger";
import { getDiscard } from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";
import { dlqHref } from "@/lib/dlq/links";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Discard" };

type Params = { connectionId: string; queue: string; jobId: string };
type Search = Record<string, string | string[] | undefined>;

/** One discard: live progress, cancel (admins), and its per-letter ledger (state filter and cursor in the URL). */
export default async function DiscardJobPage({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
  const { connectionId, queue, jobId, state, after } = await jobPageParams(params, searchParams, DISCARD_STATES);
  const actor = await requirePageActor(discardJobHref(connectionId, queue, jobId, { state, after }));
  const crumbs = (
    <DlqCrumbs connectionId={connectionId} queue={queue}>
      discard / <span className="mono">{jobId.slice(0, 8)}</span>
    </DlqCrumbs>
  );
  const loaded = await readJobForPage({
    kind: "discard",
    crumbs,
    connectionId,
    queue,
    read: async () =>
      getDiscard(actor, await requestMeta(), {
        jobId,
        state: state ?? undefined,
        after: after ?? undefined,
        limit: 50,
      }),
    jobOf: (d) => d.discard,
    back: { href: dlqHref(connectionId, queue), label: "← Back to the DLQ" },
    elsewhere: (d) => discardJobHref(d.connectionId, d.queue, jobId),
  });
  if (!loaded.ok) return loaded.problem;
  const { data } = loaded;
  return (
    <main className="page redrive-page">
      {crumbs}
      <DiscardJob
        initial={data}
        ledgerState={state}
        after={after}
        canCancel={can(actor.role, "discard:run")}
        groupLabel={null}
      />
    </main>
  );
}
