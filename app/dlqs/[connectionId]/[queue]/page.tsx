import type { Metadata } from "next";
import Link from "next/link";
import { dlqProblem } from "@/components/dlq/dlq-problem";
import { LettersTable } from "@/components/dlq/letters-table";
import { RiskConfirm } from "@/components/dlq/risk-confirm";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { decodeParam, dlqHref, parsePaging, PAGE_SIZES } from "@/lib/dlq/links";
import { openDlq, type OpenDlqResult } from "@/lib/dlq/open-dlq";
import { hasRiskConfirmation } from "@/lib/dlq/risk-cookie";
import { formatCount, formatRange } from "@/lib/format";

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
  const sp = await searchParams;
  const { page, size } = parsePaging(sp.page, sp.size);
  const self = dlqHref(connectionId, queue, { page, size });
  const actor = await requirePageActor(self);
  const acceptRisk = await hasRiskConfirmation(connectionId, queue);

  let result: OpenDlqResult;
  try {
    result = await openDlq(actor, await requestMeta(), { connectionId, queue, page, pageSize: size, acceptRisk });
  } catch (e) {
    const problem = dlqProblem(e, { connectionId, queue, back: { href: "/", label: "← Back to all DLQs" } });
    if (!problem) throw e;
    return (
      <main className="page">
        <div className="breadcrumbs">
          <Link href="/">DLQs</Link> / {connectionId} / <span className="mono">{queue}</span>
        </div>
        {problem}
      </main>
    );
  }

  const { dlq, letters } = result;
  const count = letters?.length ?? 0;
  return (
    <main className="page">
      <div className="breadcrumbs">
        <Link href="/">DLQs</Link> / {result.connection.displayName} / <span className="mono">{queue}</span>
      </div>
      <div className="page-head">
        <h1 className="mono" data-testid="dlq-name">
          {dlq.name}
        </h1>
        <span className="badge">
          {dlq.kind} · {dlq.queueType}
        </span>
        <span className="meta">
          depth {formatCount(result.depth ?? dlq.depth)} · origins {dlq.origins.length ? dlq.origins.join(", ") : "unknown"}
        </span>
      </div>
      <p className="banner banner-info" data-testid="non-destructive-note">
        Reading is non-destructive: letters are read without acknowledgement and return to the queue{dlq.queueType === "classic" ? " in their original order" : ""}.
        {result.connection.capabilities.readCountsAsDelivery ? " This broker counts each read as a delivery." : null}
      </p>
      {dlq.warnings.map((w) => (
        <div key={w.code} className="banner banner-warn" role="status">
          {w.message}
        </div>
      ))}
      {result.needsConfirmation && dlq.readRisk ? (
        <RiskConfirm connectionId={connectionId} queue={queue} risk={dlq.readRisk} canConfirm={result.canConfirm} />
      ) : (
        <>
          {dlq.readRisk && acceptRisk ? (
            <div className="banner banner-warn" role="status" data-testid="risk-accepted">
              You confirmed a risky read of this DLQ: every page load counts as a delivery for the letters read. {dlq.readRisk.message}
            </div>
          ) : null}
          <div className="toolbar">
            <nav className="pager" aria-label="Pages" data-testid="pager">
              {page > 1 ? (
                <Link className="btn btn-small" href={dlqHref(connectionId, queue, { page: page - 1, size })} data-testid="page-prev">
                  ← Previous
                </Link>
              ) : (
                <span className="btn btn-small" aria-disabled="true">← Previous</span>
              )}
              <span data-testid="page-range">{formatRange(result.offset, count, result.depth)}</span>
              {result.hasMore ? (
                <Link className="btn btn-small" href={dlqHref(connectionId, queue, { page: page + 1, size })} data-testid="page-next">
                  Next →
                </Link>
              ) : (
                <span className="btn btn-small" aria-disabled="true">Next →</span>
              )}
            </nav>
            <span className="spacer" />
            <span className="hint">Page size:</span>
            {PAGE_SIZES.map((s) => (
              <Link key={s} href={dlqHref(connectionId, queue, { page: 1, size: s })} className="btn btn-small" aria-current={s === size ? "page" : undefined} style={s === size ? { fontWeight: 700 } : undefined}>
                {s}
              </Link>
            ))}
          </div>
          <LettersTable connectionId={connectionId} queue={queue} letters={letters ?? []} backHref="/" />
        </>
      )}
    </main>
  );
}
