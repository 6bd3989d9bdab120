import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { RedrivesTable } from "@/components/redrive/redrives-table";
import { DlqHead } from "@/components/dlq/dlq-head";
import { Problem } from "@/components/ui/problem";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadOrProblem } from "@/lib/use-case/app-error";
import { decodeParam } from "@/lib/dlq/links";
import { listRedrives } from "@/lib/redrive/use-cases";
import { redrivesHref } from "@/lib/redrive/ui-links";
import { triageBase } from "@/lib/triage/view-params";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; queue: string };

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  return { title: `Redrives · ${decodeParam((await params).queue)}` };
}

/** This DLQ's redrives, newest first. */
export default async function DlqRedrivesPage({ params }: { params: Promise<Params> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const actor = await requirePageActor(redrivesHref(connectionId, queue));
  const { value: redrives, problem } = await loadOrProblem(async () =>
    listRedrives(actor, await requestMeta(), { connectionId, queue }),
  );
  return (
    <main className="page">
      <DlqHead actor={actor} connectionId={connectionId} queue={queue} current="redrives" />
      {problem ? (
        <Problem title="The redrives could not be listed.">
          <p>{problem}</p>
        </Problem>
      ) : (
        <>
          <p className="hint">
            Start a redrive from <Link href={triageBase(connectionId, queue)}>triage</Link>: a group, a filtered set, or
            letters you tick.
          </p>
          <RedrivesTable redrives={redrives ?? []} showDlq={false} />
        </>
      )}
    </main>
  );
}
