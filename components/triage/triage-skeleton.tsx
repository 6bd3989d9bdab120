/**
 * The triage page's shape while its index is read: fixed heights, so nothing jumps when data
 * arrives. Shown inside the page's Suspense boundary, after the DLQ is known to exist.
 */
export function TriageSkeleton() {
  return (
    <main className="page triage-page" aria-busy="true">
      <div className="breadcrumbs">&nbsp;</div>
      <div className="page-head">
        <h1>Triage</h1>
        <span className="meta">Loading the index…</span>
      </div>
      <div className="scan-panel skeleton-block" style={{ height: 40 }} />
      <div className="section table-wrap" style={{ padding: 8, height: 320 }}>
        {Array.from({ length: 8 }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: placeholders with no identity, a fixed count, never reordered
          <div key={i} className="skeleton" style={{ width: `${70 + ((i * 37) % 30)}%`, height: 28 }} />
        ))}
      </div>
      <div className="section table-wrap" style={{ padding: 8, height: 360 }}>
        {Array.from({ length: 12 }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: placeholders with no identity, a fixed count, never reordered
          <div key={i} className="skeleton" style={{ width: `${60 + ((i * 23) % 40)}%` }} />
        ))}
      </div>
    </main>
  );
}
