import type { DlqSummary } from "@/lib/brokers/types";
import { unhandledCount } from "@/lib/dlq/partitions";
import { formatCount, formatRelative } from "@/lib/format";
import type { DlqOverviewRow } from "@/lib/operations/queries";
import { sampledWords } from "@/lib/operations/ui-figures";

/**
 * The cells of a DLQ row that come from the broker's live listing. A DLQ the listing does not
 * have now (its broker is unreachable, or it is gone) shows the sampler's last depth, and says so.
 */
export function DepthCell({
  live,
  ops,
  fetchedAt,
  now,
}: {
  live: DlqSummary | null;
  ops: DlqOverviewRow | null;
  fetchedAt: number;
  now: number;
}) {
  if (!live) {
    return (
      <td className="num nowrap">
        <span
          data-testid="dlq-depth"
          data-source="sampler"
          title={
            ops ? `Not listed by the broker now: the sampler's depth, ${sampledWords(ops.sampledAt, now)}` : "Unknown"
          }
          suppressHydrationWarning
        >
          {formatCount(ops?.depth)}
        </span>
      </td>
    );
  }
  // Where letters stay after handling (no per-letter removal), depth counts them too.
  const unhandled = unhandledCount(live);
  return (
    <td className="num nowrap">
      <span
        data-testid="dlq-depth"
        data-source="broker"
        title={`Live from the broker, read ${formatRelative(fetchedAt, now)}`}
        suppressHydrationWarning
      >
        {formatCount(live.depth)}
      </span>
      {unhandled !== null ? (
        <span
          className="muted"
          data-testid="dlq-unhandled"
          title="Letters the console has not redriven or discarded yet"
        >
          {" "}
          · {formatCount(unhandled)} unhandled
        </span>
      ) : null}
    </td>
  );
}

export function LiveCells({ live }: { live: DlqSummary | null }) {
  if (!live) {
    return (
      <>
        <td className="num nowrap muted">—</td>
        <td className="muted">—</td>
        <td className="muted" title="The broker does not list this DLQ now">
          not listed now
        </td>
        <td className="muted">—</td>
      </>
    );
  }
  return (
    <>
      <td className="num nowrap">
        {formatCount(live.inFlight)} / {formatCount(live.consumers)}
      </td>
      <td>
        {live.origins.length ? (
          <span className="mono wrap-anywhere">{live.origins.join(", ")}</span>
        ) : (
          <span className="muted">unknown</span>
        )}
      </td>
      <td>
        <span className="badge">{live.source}</span>
      </td>
      <td>
        {!live.readRisk && live.warnings.length === 0 ? (
          <span className="muted">—</span>
        ) : (
          <span style={{ display: "inline-flex", gap: 4, flexWrap: "wrap" }}>
            {live.readRisk ? (
              <span className="badge badge-danger" title={live.readRisk.message} data-testid="dlq-risk">
                read risk: {live.readRisk.kind}
              </span>
            ) : null}
            {live.warnings.map((w) => (
              <span
                key={w.code}
                className="badge badge-warn"
                title={w.message}
                data-testid="dlq-warning"
                data-code={w.code}
              >
                {w.label}
              </span>
            ))}
          </span>
        )}
      </td>
    </>
  );
}
