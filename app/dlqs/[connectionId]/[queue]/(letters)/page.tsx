import type { Metadata } from "next";
import Link from "next/link";
import { dlqProblem } from "@/components/dlq/dlq-problem";
import { FactsTable } from "@/components/dlq/facts-table";
import { LettersTable } from "@/components/dlq/letters-table";
import { PositionControls } from "@/components/dlq/position-controls";
import { RiskConfirm } from "@/components/dlq/risk-confirm";
import { DlqCrumbTrail, DlqHead } from "@/components/dlq/dlq-head";
import { Problem } from "@/components/ui/problem";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { parseBrowseParams } from "@/lib/dlq/browse-params";
import { connectionName } from "@/lib/dlq/describe-dlq";
import { decodeParam, dlqHref, PAGE_SIZES } from "@/lib/dlq/links";
import { openDlq, type OpenDlqResult } from "@/lib/dlq/open-dlq";
import { hasRiskConfirmation } from "@/lib/dlq/risk-cookie";
import { letterLabels, pagingNote, readNotice } from "@/lib/dlq/wording";
import { formatRange } from "@/lib/format";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; queue: string };
type Search = Record<string, string | string[] | undefined>;

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  const { queue } = await params;
  return { title: decodeParam(queue) };
}

export default async function DlqPage({ params, searchParams }: { params: Promise<Params>; searchParams: Promise<Search> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const parsed = parseBrowseParams(await searchParams);
  const crumbs = <DlqCrumbTrail name={connectionName(connectionId)} connectionId={connectionId} queue={queue} />;
  if (!parsed.ok) {
    await requirePageActor(dlqHref(connectionId, queue));
    return (
      <main className="page">
        {crumbs}
        <Problem title="This link's options are not valid." back={{ href: dlqHref(connectionId, queue), label: "← Open the DLQ from its start" }} testId="bad-params">
          <p>{parsed.message}</p>
        </Problem>
      </main>
    );
  }
  const { page, size, partition, from, order } = parsed.value;
  const position = { partition, from, order };
  const self = dlqHref(connectionId, queue, { page, size, ...position });
  const actor = await requirePageActor(self);
  const acceptRisk = await hasRiskConfirmation(connectionId, queue);

  let result: OpenDlqResult;
  try {
    result = await openDlq(actor, await requestMeta(), { connectionId, queue, page, pageSize: size, acceptRisk, partition, fromOffset: from, order });
  } catch (e) {
    const problem = dlqProblem(e, { connectionId, queue, back: { href: "/", label: "← Back to all DLQs" } });
    if (!problem) throw e;
    return (
      <main className="page">
        {crumbs}
        {problem}
      </main>
    );
  }

  const { dlq, letters, connection } = result;
  const { capabilities: caps, vocabulary: vocab } = connection;
  const labels = letterLabels(caps, vocab);
  const notice = readNotice(caps, vocab, { queueType: dlq.queueType });
  const unstable = pagingNote(caps, vocab);
  const count = letters?.length ?? 0;
  const at = (o: { page?: number; size?: number }) => dlqHref(connectionId, queue, { page, size, ...position, ...o });
  return (
    <main className="page">
      <DlqHead actor={actor} connectionId={connectionId} queue={queue} current="letters" info={{ connection, dlq, problem: null }} depth={result.depth} />
      <p className={`banner banner-${notice.tone}`} data-testid="non-destructive-note">
        {notice.text}
      </p>
      {dlq.warnings.map((w) => (
        <div key={w.code} className="banner banner-warn" role="status">
          {w.message}
        </div>
      ))}
      <FactsTable facts={dlq.facts} />
      {result.needsConfirmation && dlq.readRisk ? (
        <RiskConfirm connectionId={connectionId} queue={queue} risk={dlq.readRisk} canConfirm={result.canConfirm} />
      ) : (
        <>
          {dlq.readRisk && acceptRisk ? (
            <div className="banner banner-warn" role="status" data-testid="risk-accepted">
              You confirmed a risky read of this DLQ: every page load counts as a delivery for the letters read. {dlq.readRisk.message}
            </div>
          ) : null}
          {caps.randomAccess && dlq.partitions?.length ? (
            <PositionControls
              connectionId={connectionId}
              queue={queue}
              size={size}
              partitions={dlq.partitions}
              partition={result.partition}
              from={from}
              order={result.order}
              positionWord={vocab.letterId}
              now={Date.now()}
            />
          ) : null}
          <div className="toolbar">
            <nav className="pager" aria-label="Pages" data-testid="pager">
              {page > 1 ? (
                <Link className="btn btn-small" href={at({ page: page - 1 })} data-testid="page-prev">
                  ← Previous
                </Link>
              ) : (
                <span className="btn btn-small" aria-disabled="true">← Previous</span>
              )}
              <span data-testid="page-range">{formatRange(result.offset, count, result.depth)}</span>
              {result.hasMore ? (
                <Link className="btn btn-small" href={at({ page: page + 1 })} data-testid="page-next">
                  Next →
                </Link>
              ) : (
                <span className="btn btn-small" aria-disabled="true">Next →</span>
              )}
            </nav>
            {unstable ? (
              <span className="hint" data-testid="paging-note">
                {unstable}
              </span>
            ) : null}
            <span className="spacer" />
            <span className="hint">Page size:</span>
            {PAGE_SIZES.map((s) => (
              <Link key={s} href={at({ page: 1, size: s })} className="btn btn-small" aria-current={s === size ? "page" : undefined} style={s === size ? { fontWeight: 700 } : undefined}>
                {s}
              </Link>
            ))}
          </div>
          <LettersTable connectionId={connectionId} queue={queue} letters={letters ?? []} backHref="/" labels={labels} />
        </>
      )}
    </main>
  );
}
