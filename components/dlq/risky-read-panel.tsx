import Link from "@/components/ui/link";
import { RelativeTime } from "@/components/ui/relative-time";
import { dlqHref } from "@/lib/dlq/links";
import { projectedLoss, type RiskyReadView } from "@/lib/dlq/risky-read";
import { formatCount } from "@/lib/format";
import { readLostLetters } from "@/lib/triage/read-watch";
import { RiskyReadActions } from "./risky-read-actions";

const ACTIVE = new Set(["queued", "running", "paused", "cancelling"]);

/**
 * The page of a DLQ whose reads cost letters, instead of reading it: what reading costs, the
 * snapshot the pages are served from and its age, what the last read cost, and the two choices
 * (move the letters to safety first, recommended where the broker can; or read once).
 */
export function RiskyReadPanel({
  connectionId,
  queue,
  depth,
  view,
}: {
  connectionId: string;
  queue: string;
  depth: number | null;
  view: RiskyReadView;
}) {
  const { risk, snapshot, lastRead, readLoss, safeMove } = view;
  const reading = lastRead !== null && ACTIVE.has(lastRead.state);
  const move = safeMove.latest;
  const moving = move !== null && ACTIVE.has(move.state);
  const projected = projectedLoss(view);
  return (
    <section className="section" data-testid="risky-read">
      <div className="banner banner-warn" role="alert" data-testid="read-risk">
        <p>
          <strong>Reading this DLQ from the broker costs letters.</strong> {risk.message}
        </p>
        <p>
          The console reads it only when you confirm a read, once per confirmation, and serves every page, letter and
          group of it from that read&apos;s snapshot. Opening or reloading this page reads nothing.
        </p>
      </div>
      {readLoss && readLostLetters(readLoss) ? (
        <div className="banner banner-danger" role="alert" data-testid="read-loss">
          <strong>{lossHeadline(readLoss)}</strong>{" "}
          {readLoss.onwardQueue && (readLoss.movedOnward ?? 0) > 0 ? (
            <>
              They are in{" "}
              <Link href={dlqHref(connectionId, readLoss.onwardQueue)} className="mono" data-testid="read-loss-link">
                {readLoss.onwardQueue}
              </Link>
              .{" "}
            </>
          ) : null}
          The read {lastRead?.finishedAt ? <RelativeTime value={lastRead.finishedAt} /> : null} found{" "}
          {formatCount(readLoss.before ?? 0)} letters before it and {formatCount(readLoss.after ?? 0)} after it; it is
          recorded in the audit log (dlq.read_loss).
        </div>
      ) : null}
      <p className="hint" data-testid="snapshot-age">
        {snapshot ? (
          <>
            Snapshot: <strong>{formatCount(Number(snapshot.progress.read ?? 0))}</strong> letters read{" "}
            <RelativeTime value={snapshot.finishedAt} />. The broker has not been read since.
          </>
        ) : reading ? (
          "Reading the DLQ into its snapshot…"
        ) : (
          "No snapshot yet: nothing has been read from this DLQ."
        )}
      </p>
      {move ? <SafeMoveStatus connectionId={connectionId} move={move} /> : null}
      {lastRead?.state === "failed" && lastRead.error ? (
        <div className="banner banner-warn" role="status" data-testid="read-failed">
          The last read did not finish: {lastRead.error}
        </div>
      ) : null}
      <RiskyReadActions
        connectionId={connectionId}
        queue={queue}
        depth={depth}
        plan={safeMove.plan}
        planProblem={safeMove.problem}
        canMove={view.canMove}
        canRead={view.canRead}
        busy={reading || moving}
        projected={projected}
        limit={risk.limit ?? null}
        hasSnapshot={snapshot !== null}
      />
    </section>
  );
}

function lossHeadline(l: NonNullable<RiskyReadView["readLoss"]>): string {
  const onward = l.movedOnward ?? 0;
  if (l.onwardQueue && onward > 0)
    return `${formatCount(onward)} letter${onward === 1 ? "" : "s"} moved to ${l.onwardQueue} during the last read.`;
  const gone = l.vanished ?? 0;
  return `${formatCount(gone)} letter${gone === 1 ? "" : "s"} left this DLQ during the last read${l.limit !== null ? ` (delivery limit ${l.limit})` : ""}: the broker dropped or moved them on.`;
}

function SafeMoveStatus({
  connectionId,
  move,
}: {
  connectionId: string;
  move: NonNullable<RiskyReadView["safeMove"]["latest"]>;
}) {
  if (ACTIVE.has(move.state)) {
    return (
      <div className="banner banner-info" role="status" data-testid="safe-move-progress" data-state={move.state}>
        Moving letters to <span className="mono">{move.target}</span>: {formatCount(move.moved)} moved
        {move.total !== null ? ` of ${formatCount(move.total)}` : ""}
        {move.failed ? `, ${formatCount(move.failed)} failed` : ""}.
      </div>
    );
  }
  const tone = move.state === "succeeded" && move.failed === 0 ? "info" : "warn";
  return (
    <div className={`banner banner-${tone}`} role="status" data-testid="safe-move-done" data-state={move.state}>
      {move.state === "failed" ? (
        <>The move to safety failed: {move.error}. Letters not moved are still in this DLQ. </>
      ) : (
        <>
          Moved <strong data-testid="safe-move-moved">{formatCount(move.moved)}</strong> letter
          {move.moved === 1 ? "" : "s"} to safety <RelativeTime value={move.finishedAt} />
          {move.failed ? `; ${formatCount(move.failed)} could not be moved and stay here` : ""}.{" "}
        </>
      )}
      Read them in{" "}
      <Link href={dlqHref(connectionId, move.target)} className="mono" data-testid="safe-queue-link">
        {move.target}
      </Link>
      , where reading costs nothing.
    </div>
  );
}
