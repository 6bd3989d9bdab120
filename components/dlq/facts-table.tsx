import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { VisibleText } from "@/components/ui/visible-text";
import { valueText } from "@/lib/text";
import { formatTimestampValue } from "@/lib/format";

/** The adapter's facts about a DLQ (retention, arguments, sources), folded away until asked for. */
export function FactsTable({ facts }: { facts: HeaderEntry[] }) {
  if (facts.length === 0) return null;
  return (
    <details className="facts" data-testid="dlq-facts">
      <summary>Configuration and facts ({facts.length})</summary>
      <div className="table-wrap">
        <table className="grid kv">
          <tbody>
            {facts.map((f, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: facts may repeat a name; the list is fixed in adapter order, so name plus position is the identity
              <tr key={`${f.name}-${i}`} data-testid="fact-row">
                <th scope="row">
                  <VisibleText text={f.name} />
                </th>
                <td className="value-cell">
                  <VisibleText
                    text={f.value.t === "timestamp" ? formatTimestampValue(f.value.v) : valueText(f.value)}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}
