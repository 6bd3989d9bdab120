import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { DiscardsTable } from "@/components/discard/discards-table";
import { DlqHead } from "@/components/dlq/dlq-head";
import { Problem } from "@/components/ui/problem";
import { archiveHref } from "@/lib/archive/params";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadOrProblem } from "@/lib/use-case/app-error";
import { decodeParam } from "@/lib/dlq/links";
import { listDiscards } from "@/lib/discard/use-cases";
import { discardsHref } from "@/lib/discard/ui-links";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; queue: string };

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  return { title: `Discards · ${decodeParam((await params).queue)}` };
}

/** This DLQ's discards, newest first. */
export default async function DlqDiscardsPage({ params }: { params: Promise<Params> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const actor = await requirePageActor(discardsHref(connectionId, queue));
  const { value: discards, problem } = await loadOrProblem(async () =>
    listDiscards(actor, await requestMeta(), { connectionId, queue }),
  );
  return (
    <main className="page">
      <DlqHead actor={actor} connectionId={connectionId} queue={queue} current="discards" />
      {problem ? (
        <Problem title="The discards could not be listed.">
          <p>{problem}</p>
        </Problem>
      ) : (
        <>
          <p className="hint">
            Discarded letters are kept in the <Link href={archiveHref({ connectionId, queue })}>archive</Link>, where an
            admin can put them back.
          </p>
          <DiscardsTable discards={discards ?? []} showDlq={false} />
        </>
      )}
    </main>
  );
}
