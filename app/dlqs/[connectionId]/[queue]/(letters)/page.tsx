import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { dlqProblem } from "@/components/dlq/dlq-problem";
import { FactsTable } from "@/components/dlq/facts-table";
import { LettersTable } from "@/components/dlq/letters-table";
import { PositionControls } from "@/components/dlq/position-controls";
import { RiskyReadPanel } from "@/components/dlq/risky-read-panel";
import { TriageLettersTable } from "@/components/triage/triage-letters-table";
import { DlqCrumbTrail, DlqHead } from "@/components/dlq/dlq-head";
import { Problem } from "@/components/ui/problem";
import { requestMeta, requirePageActor, type Actor } from "@/lib/auth/session";
import type { ReadRisk } from "@/lib/brokers/contract/dlq";
import { parseBrowseParams } from "@/lib/dlq/browse-params";
import { connectionName } from "@/lib/dlq/describe-dlq";
import { decodeParam, dlqHref, PAGE_SIZES } from "@/lib/dlq/links";
import { openDlq, type OpenDlqResult } from "@/lib/dlq/open-dlq";
import { riskyReadView } from "@/lib/dlq/risky-read";
import { listLetters } from "@/lib/triage/use-cases";
import { triageBase } from "@/lib/triage/view-params";
import { letterLabels, pagingNote, readNotice, unreachedNote } from "@/lib/dlq/wording";
import { formatCount, formatLetterCount, formatRange } from "@/lib/format";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; queue: string };
type Search = Record<string, string | string[] | undefined>;

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  const { queue } = await params;
  return { title: decodeParam(queue) };
}

export default async function DlqPage({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
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
        <Problem
          title="This link's options are not valid."
          back={{ href: dlqHref(connectionId, queue), label: "← Open the DLQ from its start" }}
          testId="bad-params"
        >
          <p>{parsed.message}</p>
        </Problem>
      </main>
    );
  }
  const { page, size, partition, from, order } = parsed.value;
  const position = { partition, from, order };
  const self = dlqHref(connectionId, queue, { page, size, ...position });
  const actor = await requirePageActor(self);

  let result: OpenDlqResult;
  try {
    result = await openDlq(actor, await requestMeta(), {
      connectionId,
      queue,
      page,
      pageSize: size,
      partition,
      fromOffset: from,
      order,
    });
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
  const notice = readNotice(caps, vocab, { queueType: dlq.queueType, readRisk: dlq.readRisk });
  const unstable = pagingNote(caps, vocab);
  const count = letters?.length ?? 0;
  const at = (o: { page?: number; size?: number }) => dlqHref(connectionId, queue, { page, size, ...position, ...o });
  return (
    <main className="page">
      <DlqHead
        actor={actor}
        connectionId={connectionId}
        queue={queue}
        current="letters"
        info={{ connection, dlq, problem: null, missing: false }}
        depth={result.depth}
      />
      <p className={`banner banner-${notice.tone}`} data-testid="non-destructive-note">
        {notice.text}
      </p>
      {dlq.warnings.map((w) => (
        <div key={w.code} className="banner banner-warn" role="status">
          {w.message}
        </div>
      ))}
      <FactsTable facts={dlq.facts} />
      {dlq.readRisk ? (
        <RiskySnapshot
          actor={actor}
          connectionId={connectionId}
          queue={queue}
          depth={result.depth ?? dlq.depth}
          risk={dlq.readRisk}
          size={size}
        />
      ) : (
        <>
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
                <span className="btn btn-small" aria-disabled="true">
                  ← Previous
                </span>
              )}
              <span data-testid="page-range">{formatRange(result.offset, count, result.depth)}</span>
              {result.hasMore ? (
                <Link className="btn btn-small" href={at({ page: page + 1 })} data-testid="page-next">
                  Next →
                </Link>
              ) : (
                <span className="btn btn-small" aria-disabled="true">
                  Next →
                </span>
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
              <Link
                key={s}
                href={at({ page: 1, size: s })}
                className="btn btn-small"
                aria-current={s === size ? "page" : undefined}
                style={s === size ? { fontWeight: 700 } : undefined}
              >
                {s}
              </Link>
            ))}
          </div>
          {result.unreached ? (
            <p className="banner banner-warn" role="status" data-testid="unreached-note">
              {unreachedNote(result.unreached, vocab.queue)}
            </p>
          ) : null}
          <LettersTable
            connectionId={connectionId}
            queue={queue}
            letters={letters ?? []}
            backHref="/"
            labels={labels}
          />
        </>
      )}
    </main>
  );
}

/**
 * A DLQ whose reads cost letters is never read by a page: its letters come from the snapshot (the
 * triage index of its latest confirmed read), with the choices to move them to safety or read again.
 */
async function RiskySnapshot({
  actor,
  connectionId,
  queue,
  depth,
  risk,
  size,
}: {
  actor: Actor;
  connectionId: string;
  queue: string;
  depth: number | null;
  risk: ReadRisk;
  size: number;
}) {
  const meta = await requestMeta();
  const view = await riskyReadView(actor, meta, { connectionId, queue, risk });
  const snapshot = view.snapshot
    ? await listLetters(actor, meta, { filter: { connectionId, queue }, limit: size })
    : null;
  return (
    <>
      <RiskyReadPanel connectionId={connectionId} queue={queue} depth={depth} view={view} />
      {snapshot ? (
        <section className="section" data-testid="snapshot-letters">
          <div className="toolbar">
            <h2 style={{ margin: 0 }}>Letters in the snapshot</h2>
            <span className="hint" data-testid="snapshot-count">
              {formatLetterCount(snapshot.count, snapshot.countAtLeast)} · the newest{" "}
              {formatCount(snapshot.letters.length)} shown; <Link href={triageBase(connectionId, queue)}>triage</Link>{" "}
              groups, filters and pages through all of them, from the same snapshot.
            </span>
          </div>
          <TriageLettersTable
            connectionId={connectionId}
            queue={queue}
            letters={snapshot.letters}
            keyboard
            backHref="/"
          />
        </section>
      ) : null}
    </>
  );
}
