import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { DlqCrumbs, jobPageParams, readJobForPage } from "@/components/jobs/dlq-page";
import { RedriveJob } from "@/components/redrive/redrive-job";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { LEDGER_STATES } from "@/lib/redrive/plan";
import { selectedGroup } from "@/lib/redrive/selected-group";
import { getRedrive } from "@/lib/redrive/use-cases";
import { redriveJobHref, redrivesHref } from "@/lib/redrive/ui-links";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Redrive" };

type Params = { connectionId: string; queue: string; jobId: string };
type Search = Record<string, string | string[] | undefined>;

/** One redrive: timeline, live progress, controls, verdict, and its ledger (state filter and cursor in the URL). */
export default async function RedriveJobPage({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
  const { connectionId, queue, jobId, state, after } = await jobPageParams(params, searchParams, LEDGER_STATES);
  const actor = await requirePageActor(redriveJobHref(connectionId, queue, jobId, { state, after }));
  const crumbs = (
    <DlqCrumbs connectionId={connectionId} queue={queue}>
      <Link href={redrivesHref(connectionId, queue)}>redrives</Link> / <span className="mono">{jobId.slice(0, 8)}</span>
    </DlqCrumbs>
  );
  const loaded = await readJobForPage({
    kind: "redrive",
    crumbs,
    connectionId,
    queue,
    read: async () =>
      getRedrive(actor, await requestMeta(), {
        jobId,
        state: state ?? undefined,
        after: after ?? undefined,
        limit: 50,
      }),
    jobOf: (d) => d.redrive,
    back: { href: redrivesHref(connectionId, queue), label: "← All redrives of this DLQ" },
    elsewhere: (r) => redriveJobHref(r.connectionId, r.queue, jobId),
  });
  if (!loaded.ok) return loaded.problem;
  const { data } = loaded;
  const r = data.redrive;
  const group = await selectedGroup(actor, await requestMeta(), { connectionId, queue }, r.plan.selection).catch(
    () => null,
  );
  return (
    <main className="page redrive-page">
      {crumbs}
      <RedriveJob
        initial={data}
        ledgerState={state}
        after={after}
        groupLabel={group?.label ?? null}
        role={{
          control: can(actor.role, "redrive:sample"),
          override: can(actor.role, "redrive:override"),
          name: actor.role,
        }}
      />
    </main>
  );
}
