/** A share of the DLQ as a number and a bar (the bar is decorative; the number is the value). */
export function ShareBar({ share }: { share: number }) {
  const pct = Math.max(0, Math.min(1, share)) * 100;
  const text = pct >= 10 || pct === 0 ? `${Math.round(pct)}%` : `${pct.toFixed(1)}%`;
  return (
    <span className="share">
      <span className="share-bar" aria-hidden="true">
        <span style={{ width: `${pct}%` }} />
      </span>
      <span className="share-num">{text}</span>
    </span>
  );
}
