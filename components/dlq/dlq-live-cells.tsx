import styles from "./overview.module.css";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
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
          className="source-note block"
          data-testid="dlq-unhandled"
          title="Letters the console has not redriven or discarded yet"
        >
          {formatCount(unhandled)} unhandled
        </span>
      ) : null}
      <InFlightNote live={live} />
    </td>
  );
}

/**
 * The DLQ cell's detail line: where it lives (connection, broker and queue type), where its
 * letters come from and how the console knows it. Folded under the name so the row fits a laptop.
 */
export function DlqDetail({
  live,
  connectionName,
  connectionId,
  fallbackType,
}: {
  live: DlqSummary | null;
  connectionName: string;
  connectionId: string;
  fallbackType: string;
}) {
  return (
    <span className={styles.detail} data-testid="dlq-detail">
      <span title={connectionId}>{connectionName}</span>
      {" · "}
      <span data-testid="dlq-type">{live ? `${live.kind} ${live.queueType}` : fallbackType}</span>
      {live ? (
        <>
          {" · "}
          {live.origins.length ? (
            <span
              className="mono wrap-anywhere"
              data-testid="dlq-origins"
              title="Queues or topics that dead-letter here"
            >
              from {live.origins.join(", ")}
            </span>
          ) : (
            <span data-testid="dlq-origins" title="The broker does not say which queues dead-letter here">
              origins unknown
            </span>
          )}
          {" · "}
          <span title="How the console knows this DLQ: named in its config file, discovered on the broker, or both">
            {live.source}
          </span>
        </>
      ) : (
        <span title="The broker does not list this DLQ now"> · not listed now</span>
      )}
    </span>
  );
}

/** Read risks and warnings: badges under the detail line, the whole sentence on hover. */
export function DlqWarnings({ live }: { live: DlqSummary | null }) {
  if (!live || (!live.readRisk && live.warnings.length === 0)) return null;
  return (
    <span className={styles.warnings}>
      {live.readRisk ? (
        <span className="badge badge-danger" title={live.readRisk.message} data-testid="dlq-risk">
          read risk: {live.readRisk.kind}
        </span>
      ) : null}
      {live.warnings.map((w) => (
        <span key={w.code} className="badge badge-warn" title={w.message} data-testid="dlq-warning" data-code={w.code}>
          {w.label}
        </span>
      ))}
    </span>
  );
}

/** In flight and consumers, under the depth; "—" where the broker has no such state. */
export function InFlightNote({ live }: { live: DlqSummary | null }) {
  if (!live || (live.inFlight === null && live.consumers === null)) return null;
  return (
    <span
      className="source-note block"
      data-testid="dlq-inflight"
      title="Letters delivered and not yet settled / consumers attached, live from the broker"
    >
      {formatCount(live.inFlight)} in flight · {formatCount(live.consumers)} cons.
    </span>
  );
}
