import { formatCount, truncate } from "@/lib/format";
import type { GroupRepairPreview } from "@/lib/redrive/repair-preview";
import type { PayloadDiff } from "@/lib/repair/diff-types";

/** One letter's change as the server masked it for the viewer's role. */
function DiffCell({ diff, unchanged }: { diff: PayloadDiff | null; unchanged: boolean }) {
  if (!diff || unchanged || diff.kind === "unchanged")
    return <span className="muted">No change: the payload stays as it is.</span>;
  if (diff.kind !== "json") return <span className="muted">The payload changes.</span>;
  return (
    <ul className="small" style={{ listStyle: "none", margin: 0, padding: 0 }} data-testid="group-repair-diff">
      {diff.entries.map((e) => (
        <li
          key={`${e.op}${e.path}`}
          className="mono wrap-anywhere"
          data-testid="group-repair-diff-entry"
          data-path={e.path}
          data-op={e.op}
        >
          {e.op} {e.path || "(whole payload)"}: {e.before ?? "—"} → {e.after ?? "—"}
          {e.masked ? <span className="muted"> (masked)</span> : null}
        </li>
      ))}
      {diff.truncated ? <li className="muted">More changes than shown.</li> : null}
    </ul>
  );
}

/** The patch tried on the group: how many letters it fits, and the first ones letter by letter. */
export function GroupRepairPreviewView({ preview }: { preview: GroupRepairPreview }) {
  return (
    <section className="card section" aria-label="Preview" data-testid="group-repair-preview">
      <h2>Preview</h2>
      <p
        data-testid="group-repair-counts"
        data-total={preview.total}
        data-applies={preview.applies}
        data-does-not-apply={preview.doesNotApply}
      >
        The patch applies to <strong>{formatCount(preview.applies)}</strong> of {formatCount(preview.total)} letters; it
        does not apply to <strong>{formatCount(preview.doesNotApply)}</strong>.
        {preview.doesNotApply > 0 ? " Those stay in the DLQ, marked failed in the ledger with the reason." : null}
      </p>
      <div className="table-wrap scroll">
        <table className="grid" data-testid="group-repair-letters">
          <thead>
            <tr>
              <th>Letter</th>
              <th>Patch</th>
              <th>Change (masked for your role)</th>
            </tr>
          </thead>
          <tbody>
            {preview.letters.map((l) => (
              <tr
                key={l.letterId}
                data-testid="group-repair-letter"
                data-letter-id={l.letterId}
                data-applies={String(l.applies)}
              >
                <td className="mono nowrap" title={l.letterId}>
                  {truncate(l.letterId, 30)}
                  {l.messageId && l.messageId !== l.letterId ? (
                    <div className="muted small">{truncate(l.messageId, 36)}</div>
                  ) : null}
                </td>
                <td className="small wrap-anywhere" style={{ maxWidth: 360 }}>
                  {l.applies ? (
                    <span className="badge badge-ok">applies</span>
                  ) : (
                    <span className="badge badge-danger">does not apply</span>
                  )}
                  {l.reason ? <div data-testid="group-repair-reason-cell">{l.reason}</div> : null}
                </td>
                <td>
                  {l.applies ? <DiffCell diff={l.diff} unchanged={l.unchanged} /> : <span className="muted">—</span>}
                </td>
              </tr>
            ))}
            {preview.letters.length === 0 ? (
              <tr>
                <td colSpan={3} className="muted">
                  The group holds no letters in the triage index: scan the DLQ again.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      {preview.truncated ? (
        <p className="hint">
          The first {formatCount(preview.letters.length)} letters are shown; the counts cover all{" "}
          {formatCount(preview.total)}.
        </p>
      ) : null}
    </section>
  );
}
