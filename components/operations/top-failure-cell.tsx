import Link from "@/components/ui/link";
import { formatCount, formatRelative, formatUtc } from "@/lib/format";
import { formatShare, type TopFailure } from "@/lib/operations/top-failure-view";
import { triageBase } from "@/lib/triage/view-params";
import styles from "@/components/dlq/overview.module.css";

/**
 * What fails most in one DLQ: the largest triage group's class (or reason) and its share, with
 * where the figure comes from on the line below. Text only: class names and reasons come from
 * letters, so they are rendered as text and cut with an ellipsis, never as markup.
 */
export function TopFailureCell({
  failure,
  connectionId,
  queue,
  now,
}: {
  failure: TopFailure | null;
  connectionId: string;
  queue: string;
  now: number;
}) {
  if (!failure) {
    return (
      <Link
        href={triageBase(connectionId, queue)}
        className="muted"
        data-testid="dlq-top-failure"
        data-source=""
        title="No scan of this DLQ yet, and reading a sample would cost it something (or it is empty): scan it on its Triage tab"
      >
        not scanned
      </Link>
    );
  }
  const share = formatShare(failure.count, failure.total);
  const kind = failure.basis === "exception" ? "Root-cause class" : "Dead-letter reason";
  const whence =
    failure.source === "scan"
      ? `the last scan (${formatUtc(failure.at)})`
      : failure.source === "index"
        ? `the index, kept current as letters arrive without a scan (groups as of ${formatUtc(failure.at)})`
        : `a sample of the ${formatCount(failure.total)} newest letters read ${formatUtc(failure.at)}`;
  const title = `${kind} of the largest triage group: ${failure.label}${failure.message ? ` — ${failure.message}` : ""}. ${formatCount(failure.count)} of ${formatCount(failure.total)} letters (${share}), from ${whence}.`;
  return (
    <span className={styles.failure} data-testid="dlq-top-failure" data-source={failure.source} title={title}>
      <Link href={triageBase(connectionId, queue)} className={styles.failureLine}>
        <span
          className={`${styles.failureLabel} ${failure.basis === "exception" ? "mono strong" : ""}`}
          data-testid="dlq-top-failure-label"
        >
          {failure.label}
        </span>
        <span className={styles.failureShare} data-testid="dlq-top-failure-share">
          {" "}
          · {share}
        </span>
      </Link>
      <span className="source-note" data-testid="dlq-top-failure-source" suppressHydrationWarning>
        {failure.source === "sample"
          ? `sample of ${formatCount(failure.total)}`
          : failure.source === "index"
            ? "indexed"
            : "scan"}{" "}
        · {formatRelative(failure.at, now)}
      </span>
    </span>
  );
}
