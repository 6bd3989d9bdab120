"use client";

import type { HeaderRow } from "./edit";

/**
 * The headers of the copy: each editable header's value can be changed or the header removed, new
 * headers added; locked ones (broker history, provenance, the console's x-dlq-* markers) are shown
 * with the reason and cannot be touched.
 */
export function HeaderEditor({
  rows,
  onChange,
  disabled,
}: {
  rows: HeaderRow[];
  onChange: (rows: HeaderRow[]) => void;
  disabled?: boolean;
}) {
  const update = (key: string, patch: Partial<HeaderRow>) =>
    onChange(rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const add = () =>
    onChange([
      ...rows,
      {
        key: `new-${rows.length}-${Date.now()}`,
        name: "",
        original: null,
        value: "",
        removed: false,
        lockedBecause: null,
      },
    ]);
  return (
    <section className="card section" data-testid="repair-headers">
      <div className="card-head">
        <h2>
          Headers <span className="muted">({rows.filter((r) => !r.removed).length})</span>
        </h2>
        <span className="spacer" />
        <button
          type="button"
          className="btn btn-small"
          onClick={add}
          disabled={disabled}
          data-testid="repair-header-add"
        >
          Add a header
        </button>
      </div>
      {rows.length === 0 ? <p className="muted">None.</p> : null}
      {rows.length ? (
        <div className="table-wrap">
          <table className="grid">
            <thead>
              <tr>
                <th style={{ width: 260 }}>Name</th>
                <th>Value</th>
                <th style={{ width: 90 }}>Remove</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr
                  key={r.key}
                  data-testid="repair-header-row"
                  data-name={r.name}
                  data-locked={r.lockedBecause ? "true" : "false"}
                >
                  <td className="mono wrap-anywhere">
                    {r.original === null ? (
                      <input
                        value={r.name}
                        onChange={(e) => update(r.key, { name: e.target.value })}
                        placeholder="x-header-name"
                        aria-label="New header name"
                        disabled={disabled}
                        data-testid="repair-header-name"
                      />
                    ) : (
                      r.name
                    )}
                  </td>
                  <td className="wrap-anywhere">
                    {r.lockedBecause ? (
                      <>
                        <span className="mono">{r.value}</span>
                        <br />
                        <span className="muted" data-testid="repair-header-locked">
                          Locked: {r.lockedBecause}
                        </span>
                      </>
                    ) : (
                      <input
                        value={r.value}
                        onChange={(e) => update(r.key, { value: e.target.value })}
                        disabled={disabled || r.removed}
                        aria-label={`Value of ${r.name || "the new header"}`}
                        style={{ width: "100%" }}
                        className="mono"
                        data-testid="repair-header-value"
                      />
                    )}
                  </td>
                  <td>
                    {r.lockedBecause ? null : (
                      <input
                        type="checkbox"
                        checked={r.removed}
                        onChange={(e) => update(r.key, { removed: e.target.checked })}
                        aria-label={`Remove ${r.name || "the new header"}`}
                        disabled={disabled}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
