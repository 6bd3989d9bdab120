import Form from "next/form";
import Link from "@/components/ui/link";
import { findingsHref, type FindingsView } from "@/lib/operations/ui-links";

/** Severity, connection and DLQ filters of the findings page: a GET form, so the URL is the view. */
export function FindingsFilter({
  view,
  connections,
}: {
  view: FindingsView;
  connections: Array<{ id: string; name: string }>;
}) {
  const filtered = view.severity || view.connection || view.dlq;
  return (
    <Form action="/findings" className="filter-bar findings-filter" data-testid="findings-filter">
      {view.state !== "open" ? <input type="hidden" name="state" value={view.state} /> : null}
      <div className="fb-row">
        <label>
          Severity
          <select name="severity" defaultValue={view.severity ?? ""} data-testid="filter-severity">
            <option value="">any</option>
            <option value="critical">critical</option>
            <option value="warning">warning</option>
            <option value="info">info</option>
          </select>
        </label>
        <label>
          Connection
          <select name="connection" defaultValue={view.connection ?? ""} data-testid="filter-connection">
            <option value="">any</option>
            {connections.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
            {view.connection && !connections.some((c) => c.id === view.connection) ? (
              <option value={view.connection}>{view.connection}</option>
            ) : null}
          </select>
        </label>
        <label className="fb-wide">
          DLQ (exact name)
          <input
            name="dlq"
            defaultValue={view.dlq ?? ""}
            placeholder="any DLQ"
            className="mono"
            data-testid="filter-dlq"
            maxLength={1000}
          />
        </label>
        <button type="submit" className="btn" data-testid="filter-apply">
          Apply
        </button>
        {filtered ? (
          <Link href={findingsHref({ state: view.state })} className="btn btn-quiet" data-testid="filter-clear">
            Clear
          </Link>
        ) : null}
      </div>
    </Form>
  );
}
