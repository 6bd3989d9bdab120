import type { RepairPlan } from "@/lib/repair/use-cases";
import { targetText } from "./edit";

/** The preview: what the copy will differ in (masked as the server returned it) and where it goes. */
export function RepairDiff({ plan }: { plan: RepairPlan }) {
  const p = plan.diff.payload;
  return (
    <section className="card section" data-testid="repair-preview">
      <h2>What will be sent</h2>
      <p>
        To <strong data-testid="repair-target">{targetText(plan.target, plan.originQueue)}</strong>, as a new message
        (new message id), with the console&apos;s markers (x-dlq-repaired-by-operation, x-dlq-original-message-id).
        Everything not listed below travels unchanged.
      </p>
      <h3>Payload</h3>
      {p.kind === "unchanged" ? (
        <p className="muted" data-testid="diff-payload-unchanged">
          Unchanged ({p.size} bytes, sent byte for byte).
        </p>
      ) : p.kind === "json" ? (
        <table className="grid" data-testid="diff-payload">
          <thead>
            <tr>
              <th>Change</th>
              <th>Field (JSON Pointer)</th>
              <th>Before</th>
              <th>After</th>
            </tr>
          </thead>
          <tbody>
            {p.entries.map((e) => (
              <tr key={`${e.op}${e.path}`} data-testid="diff-payload-entry" data-path={e.path}>
                <td>{e.op}</td>
                <td className="mono wrap-anywhere">{e.path || "(whole payload)"}</td>
                <td className="mono wrap-anywhere">{e.before ?? "—"}</td>
                <td className="mono wrap-anywhere">
                  {e.after ?? "—"}
                  {e.masked ? <span className="muted"> (masked)</span> : null}
                </td>
              </tr>
            ))}
            {p.entries.length === 0 ? (
              <tr>
                <td colSpan={4} className="muted">
                  The same JSON values; only the formatting changes.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      ) : p.kind === "text" ? (
        p.hunk ? (
          <div data-testid="diff-payload-text">
            <p className="muted">
              From line {p.hunk.line}
              {p.masked ? " (masked)" : ""}:
            </p>
            <pre className="block wrap">- {p.hunk.before}</pre>
            <pre className="block wrap">+ {p.hunk.after}</pre>
          </div>
        ) : (
          <p className="muted">The text changes{p.masked ? " (masked)" : ""}.</p>
        )
      ) : (
        <p data-testid="diff-payload-binary">
          Replaced by the uploaded file: {p.beforeSize} bytes → {p.afterSize} bytes.
        </p>
      )}
      {"truncated" in p && p.truncated ? <p className="muted">More changes than shown.</p> : null}
      <h3>Headers</h3>
      {plan.diff.headers.length === 0 ? (
        <p className="muted">No header changes.</p>
      ) : (
        <table className="grid" data-testid="diff-headers">
          <thead>
            <tr>
              <th>Change</th>
              <th>Header</th>
              <th>Before</th>
              <th>After</th>
            </tr>
          </thead>
          <tbody>
            {plan.diff.headers.map((h) => (
              <tr key={`${h.op}${h.name}`} data-testid="diff-header-entry">
                <td>{h.op}</td>
                <td className="mono wrap-anywhere">{h.name}</td>
                <td className="mono wrap-anywhere">{h.before ?? "—"}</td>
                <td className="mono wrap-anywhere">
                  {h.after ?? "—"}
                  {h.masked ? <span className="muted"> (masked)</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {plan.diff.newCorrelationId ? <p data-testid="diff-correlation">A new correlation id is set.</p> : null}
    </section>
  );
}
