import Link from "@/components/ui/link";
import { EmptyRow } from "@/components/ui/empty-row";
import { RelativeTime } from "@/components/ui/relative-time";
import type { AlertRuleView, DeliveryView } from "@/lib/alerts/use-cases";
import { DeliveryStateBadge } from "./delivery-log";

export type RuleRow = AlertRuleView & { firing: number; lastDelivery: DeliveryView | null };

/** Every rule: what it watches, where, where it posts (origin only), whether it fires now, and its last message. */
export function RulesTable({ rules }: { rules: RuleRow[] }) {
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="alert-rules-table">
        <thead>
          <tr>
            <th>Rule</th>
            <th>Fires when</th>
            <th>For</th>
            <th>Posts to</th>
            <th>Now</th>
            <th>Last message</th>
          </tr>
        </thead>
        <tbody>
          <EmptyRow show={rules.length === 0} columns={6}>
            No alert rules yet.
          </EmptyRow>
          {rules.map((r) => (
            <tr key={r.id} data-testid="alert-rule-row" data-name={r.name}>
              <td className="wrap-anywhere">
                <Link href={`/alerts/${r.id}`}>{r.name}</Link>
              </td>
              <td>{r.condition}</td>
              <td className="wrap-anywhere">{r.scope}</td>
              <td className="mono wrap-anywhere small">{r.webhookOrigin}</td>
              <td>
                {!r.enabled ? (
                  <span className="badge">disabled</span>
                ) : r.firing > 0 ? (
                  <span className="badge badge-danger">
                    firing for {r.firing} {r.kind === "group_grew" ? "group" : "DLQ"}
                    {r.firing === 1 ? "" : "s"}
                  </span>
                ) : (
                  <span className="badge badge-ok">quiet</span>
                )}
              </td>
              <td>
                {r.lastDelivery ? (
                  <span style={{ display: "inline-flex", gap: 6, alignItems: "center", flexWrap: "wrap" }}>
                    <span>
                      {r.lastDelivery.event === "fire"
                        ? "firing"
                        : r.lastDelivery.event === "resolve"
                          ? "resolved"
                          : "test"}
                    </span>
                    <DeliveryStateBadge d={r.lastDelivery} />
                    <RelativeTime value={r.lastDelivery.createdAt} />
                  </span>
                ) : (
                  <span className="muted">none</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
