/** Placeholder rows with the page's shape, so nothing jumps when data arrives. */
export function TableSkeleton({ title, rows = 12 }: { title: string; rows?: number }) {
  return (
    <main className="page" aria-busy="true">
      <div className="page-head">
        <h1>{title}</h1>
        <span className="meta">Loading…</span>
      </div>
      <div className="table-wrap" style={{ padding: 8 }}>
        {Array.from({ length: rows }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: placeholders with no identity, a fixed count, never reordered
          <div key={i} className="skeleton" style={{ width: `${70 + ((i * 37) % 30)}%` }} />
        ))}
      </div>
    </main>
  );
}
