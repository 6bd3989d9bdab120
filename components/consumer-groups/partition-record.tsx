import { LetterEntries } from "@/components/dlq/entries-table";
import { PayloadPanel } from "@/components/dlq/payload-panel";
import type { PartitionRecord } from "@/lib/consumer-groups/use-cases";
import { digestLabel, formatBytes } from "@/lib/format";

/**
 * The record a group's consumer gets next, as a letter (masked on the server, with the letter page's
 * badges: what was masked and by which rule), or why there is none. `canReveal`: the reader's role
 * may reveal masked values (the badges then do not send it to an admin).
 */
export function PartitionRecordView({ record, canReveal }: { record: PartitionRecord; canReveal: boolean }) {
  if (record.kind === "gone") {
    return (
      <div className="banner banner-warn" role="status" data-testid="record-gone">
        The committed offset lies before the partition&apos;s first record ({record.start}): retention deleted it. The
        group&apos;s consumer will jump to where its auto.offset.reset says.
      </div>
    );
  }
  if (record.kind === "none") {
    return (
      <div className="banner banner-info" role="status" data-testid="record-none">
        No record at or after the committed offset (the partition ends at {record.end}): the group has caught up since
        the last sample.
      </div>
    );
  }
  const l = record.letter;
  return (
    <>
      <section className="card section" data-testid="partition-record" data-offset={record.offset}>
        <h2>
          The record at offset <span className="mono">{record.offset}</span>
        </h2>
        <table className="kv grid">
          <tbody>
            <tr>
              <th scope="row">Key</th>
              <td className="mono wrap-anywhere">{l.orderingKey ?? <span className="muted">none</span>}</td>
            </tr>
            <tr>
              <th scope="row">Size</th>
              <td>{formatBytes(l.bodySize)}</td>
            </tr>
            {l.messageId ? (
              <tr>
                <th scope="row">Message id</th>
                <td className="mono wrap-anywhere">{l.messageId}</td>
              </tr>
            ) : null}
            <tr>
              <th scope="row">{digestLabel(l.sha256).label}</th>
              <td className="mono wrap-anywhere">{l.sha256}</td>
            </tr>
          </tbody>
        </table>
      </section>
      <PayloadPanel
        view={l.payload}
        masked={l.masking.payloadMasked}
        maskedDetail={{ payloadMaskedCount: l.masking.payloadMaskedCount, byRule: l.masking.byRule, canReveal }}
        sensitive={l.masking.sensitive}
        canDownload={false}
        size={l.bodySize}
        sha256={l.sha256}
        contentType={l.contentType}
        contentEncoding={l.contentEncoding}
        downloadHref=""
      />
      <LetterEntries letter={l} canReveal={canReveal} />
    </>
  );
}
