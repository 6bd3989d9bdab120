import { RelativeTime } from "@/components/ui/relative-time";
import type { IndexedLetter } from "@/lib/triage/queries";

/**
 * When a letter died, as far as its broker recorded it: the dead-lettering time; else when it was
 * sent (SQS records SentTimestamp, not the move to the DLQ); else when a scan first saw it, said so.
 */
export function LetterWhen({
  letter: l,
}: {
  letter: Pick<IndexedLetter, "deadLetteredAt" | "retentionFrom" | "firstSeenAt">;
}) {
  if (l.deadLetteredAt)
    return (
      <span data-kind="dead-lettered">
        died <RelativeTime value={l.deadLetteredAt} />
        {l.retentionFrom && l.retentionFrom !== l.deadLetteredAt ? (
          <span className="muted">
            {" "}
            · sent <RelativeTime value={l.retentionFrom} />
          </span>
        ) : null}
      </span>
    );
  if (l.retentionFrom)
    return (
      <span data-kind="sent">
        sent <RelativeTime value={l.retentionFrom} />{" "}
        <span className="muted" title="The broker records when the letter was sent, not when it was dead-lettered">
          · died: not recorded
        </span>
      </span>
    );
  return (
    <span data-kind="first-seen" title="The broker records no time for this letter: this is when a scan first saw it">
      first seen <RelativeTime value={l.firstSeenAt} /> <span className="muted">(scan)</span>
    </span>
  );
}
