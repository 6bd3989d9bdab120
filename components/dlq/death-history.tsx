import { RelativeTime } from "@/components/ui/relative-time";
import type { DeathRecord } from "@/lib/brokers/types";
import { valueText } from "@/lib/dlq/display-value";

/** The full dead-lettering history, most recent first (as the adapter orders it). */
export function DeathHistory({ history }: { history: DeathRecord[] }) {
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
                <th>Queue</th>
                <th>Reason</th>
                <th className="num">Count</th>
                <th>Time</th>
                <th>Exchange</th>
                <th>Routing keys</th>
                <th>Other fields</th>
              </tr>
            </thead>
            <tbody>
              {history.map((d, i) => (
                <tr key={i} data-testid="death-row">
                  <td className="mono wrap-anywhere">{d.queue ?? "—"}</td>
                  <td>{d.reason ? <span className="badge badge-info">{d.reason}</span> : "—"}</td>
                  <td className="num">{d.count ?? "—"}</td>
                  <td className="nowrap">
                    <RelativeTime value={d.time} />
                  </td>
                  <td className="mono wrap-anywhere">{d.exchange === null ? "—" : d.exchange === "" ? <span className="muted">(default)</span> : d.exchange}</td>
                  <td className="mono wrap-anywhere">{d.routingKeys.length ? d.routingKeys.join(", ") : "—"}</td>
                  <td className="value-cell">{d.extra.length ? d.extra.map((x) => `${x.name}: ${valueText(x.value)}`).join("\n") : <span className="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
