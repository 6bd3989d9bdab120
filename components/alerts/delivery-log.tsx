import Link from "@/components/ui/link";
import { EmptyRow } from "@/components/ui/empty-row";
import { RelativeTime } from "@/components/ui/relative-time";
import type { AlertStateView, DeliveryView } from "@/lib/alerts/use-cases";
import { VisibleText } from "@/components/ui/visible-text";

const dlqHref = (connectionId: string, queue: string) =>
  `/dlqs/${encodeURIComponent(connectionId)}/${encodeURIComponent(queue)}`;

const EVENT_LABEL: Record<string, string> = { fire: "firing", resolve: "resolved", test: "test message" };

export function DeliveryStateBadge({ d }: { d: Pick<DeliveryView, "state" | "attempts"> }) {
  if (d.state === "delivered")
    return <span className="badge badge-ok">delivered{d.attempts > 1 ? ` (attempt ${d.attempts})` : ""}</span>;
  if (d.state === "failed") return <span className="badge badge-danger">failed</span>;
  return <span className="badge badge-warn">{d.attempts === 0 ? "waiting" : `retrying (${d.attempts} failed)`}</span>;
}

function Dlq({ connectionId, queue }: { connectionId: string | null; queue: string | null }) {
  if (!connectionId || !queue) return <span className="muted">—</span>;
  return (
    <>
      <Link href={dlqHref(connectionId, queue)} className="mono wrap-anywhere">
        <VisibleText text={queue} />
      </Link>{" "}
      <span className="muted small">on {connectionId}</span>
    </>
  );
}

/** The last failure's class; under it, for admins only (the server leaves it out for others), its words. */
function DeliveryError({ d }: { d: Pick<DeliveryView, "errorClass" | "errorDetail"> }) {
  if (!d.errorClass) return <span className="muted">—</span>;
  return (
    <>
      <span data-testid="alert-delivery-error-class">{d.errorClass}</span>
      {d.errorDetail ? (
        <div className="muted" data-testid="alert-delivery-error-detail">
          {d.errorDetail}
        </div>
      ) : null}
    </>
  );
}

/** A rule's messages, newest first: every attempt's status code or error, the next try, or when it arrived. */
export function DeliveryLog({ deliveries }: { deliveries: DeliveryView[] }) {
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="alert-deliveries">
        <thead>
          <tr>
            <th>Queued</th>
            <th>Message</th>
            <th>DLQ</th>
            <th>State</th>
            <th className="num">HTTP</th>
            <th>Last error</th>
            <th>Next try / delivered</th>
          </tr>
        </thead>
        <tbody>
          <EmptyRow show={deliveries.length === 0} columns={7}>
            No messages yet: one goes out when the rule starts firing for a DLQ, and one when it resolves.
          </EmptyRow>
          {deliveries.map((d) => (
            <tr key={d.id} data-testid="alert-delivery-row" data-event={d.event} data-state={d.state}>
              <td className="nowrap">
                <RelativeTime value={d.createdAt} />
              </td>
              <td>{EVENT_LABEL[d.event] ?? d.event}</td>
              <td>
                <Dlq connectionId={d.connectionId} queue={d.queue} />
              </td>
              <td>
                <DeliveryStateBadge d={d} />
              </td>
              <td className="num">{d.statusCode ?? <span className="muted">—</span>}</td>
              <td className="wrap-anywhere small" data-testid="alert-delivery-error">
                <DeliveryError d={d} />
              </td>
              <td className="nowrap">
                {d.state === "pending" ? (
                  <RelativeTime value={d.nextAttemptAt} />
                ) : d.state === "delivered" ? (
                  <RelativeTime value={d.deliveredAt} />
                ) : (
                  <span className="muted">gave up</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The DLQs a rule fires for, then those it fired for and resolved. */
export function AlertStates({ states }: { states: AlertStateView[] }) {
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="alert-states">
        <thead>
          <tr>
            <th>DLQ</th>
            <th>State</th>
            <th>Since</th>
            <th>Seen</th>
          </tr>
        </thead>
        <tbody>
          <EmptyRow show={states.length === 0} columns={4}>
            The rule has not fired for any DLQ.
          </EmptyRow>
          {states.map((s) => (
            <tr key={`${s.connectionId}\u0000${s.queue}`} data-testid="alert-state-row" data-state={s.state}>
              <td>
                <Dlq connectionId={s.connectionId} queue={s.queue} />
              </td>
              <td>
                {s.state === "firing" ? (
                  <span className="badge badge-danger">firing</span>
                ) : (
                  <span className="badge badge-ok">resolved</span>
                )}
              </td>
              <td className="nowrap">
                <RelativeTime value={s.since} />
              </td>
              <td className="wrap-anywhere">{s.value ?? <span className="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
