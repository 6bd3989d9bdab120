import Link from "@/components/ui/link";
import { archivedLetterHref } from "@/lib/archive/params";
import { letterHref } from "@/lib/dlq/links";
import type { RepairEnd, RepairTrail } from "@/lib/repair/trail";
import { RelativeTime } from "@/components/ui/relative-time";
import { archivedOriginalHref } from "./edit";

/**
 * For a letter page whose letter is not in the DLQ: the repair it took part in, from the audit log.
 * An original says where its copy went and links to it; a copy (linked from the repair's answer
 * before it ever comes back) says where it was sent and links to its original in the archive.
 */
export function RepairTrailNotes({ connectionId, trail }: { connectionId: string; trail: RepairTrail }) {
  return (
    <>
      {trail.repairedAs ? <RepairedAs connectionId={connectionId} end={trail.repairedAs} /> : null}
      {trail.copyOf ? <CopyOf connectionId={connectionId} end={trail.copyOf} /> : null}
    </>
  );
}

function originalHref(connectionId: string, end: RepairEnd) {
  return end.archiveId
    ? archivedLetterHref(end.archiveId)
    : archivedOriginalHref(end.operationId, { connectionId, queue: end.queue, id: end.originalLetterId });
}

function Sent({ end }: { end: RepairEnd }) {
  return (
    <>
      sent to <span className="mono">{end.destination ?? "its target"}</span>
      {end.copyId ? (
        <>
          {" "}
          as message{" "}
          <span className="mono" data-testid="trail-copy-id">
            {end.copyId}
          </span>
        </>
      ) : null}{" "}
      <RelativeTime value={end.at.toISOString()} /> <span className="muted">(repair operation {end.operationId})</span>
    </>
  );
}

function RepairedAs({ connectionId, end }: { connectionId: string; end: RepairEnd }) {
  return (
    <div className="banner banner-info" role="status" data-testid="trail-repaired-as">
      <p>
        <strong>Repaired and resubmitted.</strong> Its repaired copy was <Sent end={end} />.
      </p>
      <p>
        {end.copyLetterId ? (
          <>
            <Link href={letterHref(connectionId, end.queue, end.copyLetterId)} data-testid="trail-copy-link">
              The resubmitted message
            </Link>
            {" · "}
          </>
        ) : null}
        <Link href={originalHref(connectionId, end)} data-testid="trail-original-link">
          This letter as it was, in the archive
        </Link>
      </p>
    </div>
  );
}

function CopyOf({ connectionId, end }: { connectionId: string; end: RepairEnd }) {
  return (
    <div className="banner banner-info" role="status" data-testid="trail-copy-of">
      <p>
        <strong>A repaired and resubmitted message.</strong> It was <Sent end={end} />, and has not come back to this
        DLQ: it is here only if it fails again.
      </p>
      <p>
        Repaired from <span className="mono">{end.originalLetterId}</span> of <span className="mono">{end.queue}</span>:{" "}
        <Link href={originalHref(connectionId, end)} data-testid="trail-original-link">
          the original, in the archive
        </Link>
      </p>
    </div>
  );
}
