import { RelativeTime } from "@/components/ui/relative-time";
import type { DeathRecord } from "@/lib/brokers/contract/letter";
import { valueText } from "@/lib/text";
import { formatTimestampValue } from "@/lib/format";

const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * The full dead-lettering history, most recent first (as the adapter orders it). `queueLabel` is the
 * broker's word for where the letter died ("queue", "topic": LetterLabels.queue).
 */
export function DeathHistory({
  history,
  countLabel = "Count",
  queueLabel = "queue",
}: {
  history: DeathRecord[];
  countLabel?: string;
  queueLabel?: string;
}) {
  // Brokers without exchanges or routing keys leave those columns empty: do not show them.
  const route = history.some((d) => d.exchange !== null || d.routingKeys.length > 0);
  const counted = history.some((d) => d.count !== null);
  const timed = history.some((d) => d.time !== null);
  return (
    <section className="card section" data-testid="death-history">
      <div className="card-head">
        <h2>
          Death history <span className="muted">({history.length}, most recent first)</span>
        </h2>
      </div>
      {history.length === 0 ? (
        <p className="muted">The broker recorded no dead-lettering history for this letter.</p>
      ) : (
        <div className="table-wrap">
          <table className="grid">
            <thead>
              <tr>
                <th data-testid="death-queue-label">{sentence(queueLabel)}</th>
                <th>Reason</th>
                {counted ? <th className="num">{countLabel}</th> : null}
                {timed ? <th>Time</th> : null}
                {route ? <th>Exchange</th> : null}
                {route ? <th>Routing keys</th> : null}
                <th>Other fields</th>
              </tr>
            </thead>
            <tbody>
              {history.map((d, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a letter's death history is fixed, in broker order, and its entries have no id
                <tr key={i} data-testid="death-row">
                  <td className="mono wrap-anywhere">{d.queue ?? "—"}</td>
                  <td className="wrap-anywhere" data-testid="death-reason">
                    {d.reason ? <span className="badge badge-info">{d.reason}</span> : "—"}
                  </td>
                  {counted ? <td className="num">{d.count ?? "—"}</td> : null}
                  {timed ? (
                    <td className="nowrap">
                      <RelativeTime value={d.time} />
                    </td>
                  ) : null}
                  {route ? (
                    <td className="mono wrap-anywhere">
                      {d.exchange === null ? (
                        "—"
                      ) : d.exchange === "" ? (
                        <span className="muted">(default)</span>
                      ) : (
                        d.exchange
                      )}
                    </td>
                  ) : null}
                  {route ? (
                    <td className="mono wrap-anywhere">{d.routingKeys.length ? d.routingKeys.join(", ") : "—"}</td>
                  ) : null}
                  <td className="value-cell">
                    {d.extra.length ? (
                      d.extra
                        .map(
                          (x) =>
                            `${x.name}: ${x.value.t === "timestamp" ? formatTimestampValue(x.value.v) : valueText(x.value)}`,
                        )
                        .join("\n")
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
