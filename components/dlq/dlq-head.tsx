import Link from "@/components/ui/link";
import type { ReactNode } from "react";
import { DlqTabs } from "@/components/triage/dlq-tabs";
import type { Actor } from "@/lib/auth/session";
import { requestMeta } from "@/lib/auth/session";
import { describeDlqHead, type DlqHeadInfo } from "@/lib/dlq/describe-dlq";
import { dlqHref } from "@/lib/dlq/links";
import { unhandledCount } from "@/lib/dlq/partitions";
import { letterLabels } from "@/lib/dlq/wording";
import { formatCount } from "@/lib/format";
import { listScans, type ScanView } from "@/lib/triage/use-cases";
import { RelativeTime } from "@/components/ui/relative-time";
import { DlqOpsStrip } from "@/components/operations/dlq-ops-strip";
import { VisibleText } from "@/components/ui/visible-text";

/** "health": the DLQ's operations page (figures, charts, findings), reached from the line under the header. */
type Tab = "letters" | "triage" | "redrives" | "discards" | "health";

/**
 * The header of every tab of a DLQ: breadcrumbs with the connection's name, the DLQ's name, broker
 * and type, depth (and unhandled, in flight), origins, and the tabs. A page that already described
 * the DLQ passes `info` (and the depth it read); the others leave it to this component, which asks
 * the broker for the queue's description only (no letter is read).
 */
export async function DlqHead({
  actor,
  connectionId,
  queue,
  current,
  info,
  depth,
  scans,
}: {
  actor: Actor;
  connectionId: string;
  queue: string;
  current: Tab;
  info?: DlqHeadInfo;
  depth?: number | null;
  scans?: ScanView[];
}) {
  const meta = await requestMeta();
  const head = info ?? (await describeDlqHead(actor, meta, { connectionId, queue }));
  const list = scans ?? (await listScans(actor, meta, { connectionId, queue }).catch(() => [] as ScanView[]));
  // Where reads cost letters, every tab is served from the snapshot: say how old it is.
  const snapshot = head.dlq?.readRisk ? (list.find((s) => s.state === "succeeded") ?? null) : undefined;
  const { connection, dlq } = head;
  const labels = letterLabels(connection.capabilities, connection.vocabulary);
  const unhandled = dlq ? unhandledCount(dlq) : null;
  return (
    <>
      <DlqCrumbTrail
        name={connection.displayName}
        connectionId={connectionId}
        queue={queue}
        current={current === "letters" ? null : current}
      />
      <div className="page-head" data-testid="dlq-head">
        <h1 className="mono" data-testid="dlq-name">
          <VisibleText text={dlq?.name ?? queue} />
        </h1>
        <span className="badge" data-testid="dlq-kind">
          {connection.kind}
          {dlq ? ` · ${dlq.queueType}` : null}
        </span>
        {dlq ? (
          <span className="meta">
            depth <span data-testid="dlq-depth">{formatCount(depth ?? dlq.depth)}</span>
            {unhandled !== null ? (
              <>
                {" "}
                (<span data-testid="dlq-unhandled">{formatCount(unhandled)}</span> unhandled)
              </>
            ) : null}
            {dlq.inFlight ? ` · in flight ${formatCount(dlq.inFlight)}` : null} · {labels.origin.toLowerCase()}
            {dlq.origins.length === 1 ? "" : "s"}{" "}
            {dlq.origins.length ? (
              <span className="mono" data-testid="dlq-origins">
                {dlq.origins.join(", ")}
              </span>
            ) : (
              <span data-testid="dlq-origins">not recorded</span>
            )}
          </span>
        ) : (
          <span className="meta" data-testid="dlq-head-problem">
            depth unknown: {head.problem}
          </span>
        )}
        {snapshot !== undefined ? (
          <span
            className="badge badge-warn"
            data-testid="snapshot-badge"
            title="Reading this DLQ costs letters: its pages are served from the snapshot of its last confirmed read"
          >
            {snapshot ? (
              <>
                snapshot of <RelativeTime value={snapshot.finishedAt} />
              </>
            ) : (
              "no snapshot yet"
            )}
          </span>
        ) : null}
        <DlqTabs actor={actor} connectionId={connectionId} queue={queue} current={current} scans={list} />
      </div>
      {current === "health" ? null : <DlqOpsStrip actor={actor} connectionId={connectionId} queue={queue} />}
    </>
  );
}

/** DLQs / connection name / queue / what is open, as every page under a DLQ shows it. */
export function DlqCrumbTrail({
  name,
  connectionId,
  queue,
  current,
  children,
}: {
  name: string;
  connectionId: string;
  queue: string;
  current?: string | null;
  children?: ReactNode;
}) {
  const last = children ?? current;
  return (
    <div className="breadcrumbs" data-testid="breadcrumbs">
      <Link href="/">DLQs</Link> / <span data-testid="crumb-connection">{name}</span> /{" "}
      {last ? (
        <>
          <Link href={dlqHref(connectionId, queue)} className="mono">
            <VisibleText text={queue} />
          </Link>{" "}
          / {last}
        </>
      ) : (
        <span className="mono">
          <VisibleText text={queue} />
        </span>
      )}
    </div>
  );
}
