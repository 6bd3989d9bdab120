import Link from "@/components/ui/link";
import { CopyButton } from "@/components/ui/copy-button";
import { RelativeTime } from "@/components/ui/relative-time";
import { VisibleText } from "@/components/ui/visible-text";
import type { SnapshotLetter } from "@/lib/dlq/snapshot-letter";
import { dlqHref } from "@/lib/dlq/links";
import { digestLabel, formatBytes } from "@/lib/format";
import { EntriesTable } from "./entries-table";
import { MetaMaskedBadge } from "./masked-badge";
import { PayloadPanel } from "./payload-panel";

/**
 * A letter of a DLQ whose reads cost letters, from its snapshot: the broker is not read for it.
 * The index keeps headers as text and the payload up to its cap; what it does not keep is said.
 */
export function SnapshotLetterView({
  connectionId,
  queue,
  s,
  canReveal,
}: {
  connectionId: string;
  queue: string;
  s: SnapshotLetter | null;
  /** The role may reveal (on a letter read from the broker); decides the badges' "ask an admin". */
  canReveal: boolean;
}) {
  if (!s) {
    return (
      <div className="banner banner-warn" role="status" data-testid="letter-gone">
        <p>
          <strong>This letter is not in the snapshot of this DLQ.</strong> The snapshot holds the letters of the last
          confirmed read; <Link href={dlqHref(connectionId, queue)}>back to the DLQ</Link> to see them, or to read it
          again.
        </p>
      </div>
    );
  }
  const l = s.letter;
  const rows: Array<[string, string | null, string?]> = [
    ["Letter id", l.letterId, "snapshot-letter-id"],
    ["Message id", l.messageId],
    ["Reason", l.reason],
    ["Origin", l.originQueue],
    ["Count", l.receiveCount === null ? null : String(l.receiveCount)],
    ["Exception class", l.exceptionClass],
    ["Exception message", l.exceptionMessage],
    ["Group", l.groupLabel],
    ["Size", formatBytes(l.bodySize)],
    [digestLabel(l.sha256).label, l.sha256],
  ];
  return (
    <>
      <div className="page-head">
        <h1>Letter</h1>
        <code className="wrap-anywhere" data-testid="letter-id">
          {l.letterId}
        </code>
        <CopyButton text={l.letterId} label="Copy id" />
      </div>
      <div className="banner banner-info" role="status" data-testid="snapshot-letter">
        From the snapshot: read <RelativeTime value={l.lastSeenAt} />
        {l.goneAt ? (
          <>
            ; the next read found it gone <RelativeTime value={l.goneAt} />
          </>
        ) : null}
        . The broker was not read for this page. The snapshot keeps headers as text and the payload
        {l.payloadTruncated ? " only up to its first bytes" : ""}; the letter&apos;s full x-death history and properties
        are in the broker.
      </div>
      <section className="card section" data-testid="letter-summary">
        <table className="kv grid">
          <tbody>
            {rows
              .filter(([, v]) => v !== null && v !== "")
              .map(([label, v, testId]) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  <td className="wrap-anywhere" data-testid={testId}>
                    <VisibleText text={v ?? ""} />
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </section>
      <PayloadPanel
        view={s.payload}
        masked={s.masking.payloadMasked}
        maskedDetail={{ payloadMaskedCount: s.masking.payloadMaskedCount, byRule: s.masking.byRule, canReveal }}
        sensitive={s.masking.sensitive}
        canDownload={false}
        size={l.bodySize}
        sha256={l.sha256}
        contentType={null}
        contentEncoding={null}
        downloadHref=""
      />
      <EntriesTable
        title="Headers"
        entries={s.headers}
        testId="headers"
        rowTestId="header-row"
        badge={<MetaMaskedBadge masking={s.masking} canReveal={canReveal} />}
      />
    </>
  );
}
