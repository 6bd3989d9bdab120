import { CopyButton } from "@/components/ui/copy-button";
import type { ReactNode } from "react";
import { HiddenCharsBadge } from "@/components/ui/hidden-chars-badge";
import { VisibleText } from "@/components/ui/visible-text";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { entriesText, typeOf } from "@/lib/letter/display-value";
import { valueText } from "@/lib/text";
import { formatTimestampValue } from "@/lib/format";
import { MetaMaskedBadge } from "./masked-badge";
import type { MaskedByRule } from "@/lib/letter/mask-letter";

/** Properties or headers: name, type, value (as text, wrapped, flagged when it holds hidden characters), with copy buttons. */
export function EntriesTable({
  title,
  entries,
  testId,
  rowTestId,
  badge,
}: {
  title: string;
  entries: HeaderEntry[];
  testId: string;
  rowTestId: string;
  /** Beside the title, e.g. what masking changed. */
  badge?: ReactNode;
}) {
  return (
    <section className="card section" data-testid={testId}>
      <div className="card-head">
        <h2>
          {title} <span className="muted">({entries.length})</span>
        </h2>
        {badge}
        <span className="spacer" />
        {entries.length ? (
          <CopyButton text={entriesText(entries)} label={`Copy all ${title.toLowerCase()}`} testId={`${testId}-copy`} />
        ) : null}
      </div>
      {entries.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <div className="table-wrap" style={{ maxHeight: 600 }}>
          <table className="grid">
            <thead>
              <tr>
                <th style={{ width: 260 }}>Name</th>
                <th style={{ width: 120 }}>Type</th>
                <th>Value</th>
                <th style={{ width: 60 }} />
              </tr>
            </thead>
            <tbody>
              {entries.map((e, i) => {
                const text = e.value.t === "timestamp" ? formatTimestampValue(e.value.v) : valueText(e.value);
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: headers may repeat a name; the list is fixed in wire order, so name plus position is the identity
                  <tr key={`${e.name}-${i}`} data-testid={rowTestId} data-name={e.name}>
                    {/* VisibleText: a direction control in a name or value is marked and cannot reorder the text around it. */}
                    <td className="mono wrap-anywhere">
                      <VisibleText text={e.name} />
                    </td>
                    <td className="muted nowrap">
                      {typeOf(e.value)} <HiddenCharsBadge text={`${e.name}${text}`} />
                    </td>
                    <td className="value-cell">
                      <VisibleText text={text} />
                    </td>
                    <td title="Copies the value as received, hidden characters included">
                      <CopyButton text={text} label="Copy" />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** A letter's properties and headers, the headers' card saying what masking changed outside the payload. */
export function LetterEntries({
  letter,
  canReveal,
}: {
  letter: {
    properties: HeaderEntry[];
    headers: HeaderEntry[];
    masking: { maskedCount: number; payloadMaskedCount: number; byRule: MaskedByRule[] };
  };
  canReveal: boolean;
}) {
  return (
    <>
      <EntriesTable title="Properties" entries={letter.properties} testId="properties" rowTestId="property-row" />
      <EntriesTable
        title="Headers"
        entries={letter.headers}
        testId="headers"
        rowTestId="header-row"
        badge={<MetaMaskedBadge masking={letter.masking} canReveal={canReveal} />}
      />
    </>
  );
}
