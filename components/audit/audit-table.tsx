import { RelativeTime } from "@/components/ui/relative-time";
import type { AuditRow } from "@/lib/audit/types";
import { auditActionLabel } from "@/lib/audit/actions";
import { EmptyRow } from "@/components/ui/empty-row";
import { VisibleText } from "@/components/ui/visible-text";

const OUTCOME_CLASS = { success: "badge-ok", denied: "badge-danger", failure: "badge-warn" } as const;

export function AuditTable({ rows }: { rows: AuditRow[] }) {
  return (
    <div className="table-wrap scroll">
      <table className="grid" data-testid="audit-table">
        <thead>
          <tr>
            <th>Time</th>
            <th>Actor</th>
            <th>Role</th>
            <th>Action</th>
            <th>Outcome</th>
            <th>Connection / queue</th>
            <th>Target</th>
            <th>Request</th>
            <th>Details</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-testid="audit-row" data-action={r.action} data-outcome={r.outcome}>
              <td className="nowrap">
                <RelativeTime value={r.at} />
              </td>
              <td className="wrap-anywhere">{r.actorEmail ?? <span className="muted">anonymous</span>}</td>
              <td>{r.actorRole ?? <span className="muted">—</span>}</td>
              <td>
                {auditActionLabel(r.action)}
                <div className="mono muted">{r.action}</div>
              </td>
              <td>
                <span className={`badge ${OUTCOME_CLASS[r.outcome] ?? ""}`} data-testid="audit-outcome">
                  {r.outcome}
                </span>
              </td>
              <td className="mono wrap-anywhere">
                {r.connectionId || r.queue ? (
                  <>
                    {r.connectionId ?? "—"}
                    {r.queue ? (
                      <div>
                        <VisibleText text={r.queue} />
                      </div>
                    ) : null}
                  </>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td className="mono wrap-anywhere" style={{ maxWidth: 220 }}>
                {r.target ?? <span className="muted">—</span>}
              </td>
              <td
                className="mono truncate"
                style={{ maxWidth: 110 }}
                title={`request ${r.requestId ?? "—"}${r.ip ? ` from ${r.ip}` : ""} · operation ${r.operationId}`}
              >
                {r.requestId ?? "—"}
              </td>
              <td>
                {r.details && Object.keys(r.details).length ? (
                  <details className="audit-details">
                    <summary>{Object.keys(r.details).slice(0, 3).join(", ")}</summary>
                    <pre className="mono">{JSON.stringify(r.details, null, 2)}</pre>
                  </details>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          ))}
          <EmptyRow show={rows.length === 0} columns={9}>
            No audit entries match this filter.
          </EmptyRow>
        </tbody>
      </table>
    </div>
  );
}
