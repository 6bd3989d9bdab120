import { RelativeTime } from "@/components/ui/relative-time";
import { formatSpan, formatUtc } from "@/lib/format";

/** An offset or a lag as digits with separators (Kafka offsets are 64-bit: bigint, never a float). */
export function offsetText(n: bigint | null | undefined): string {
  return n === null || n === undefined ? "—" : n.toLocaleString("en-US");
}

/** A partition's state in words: stuck since, moving, or caught up. */
export function PartitionState({
  lag,
  stuck,
  since,
  stuckForMs,
}: {
  lag: bigint;
  stuck: boolean;
  since: Date | null;
  stuckForMs: number | null;
}) {
  if (stuck) {
    return (
      <span
        className="badge badge-danger"
        data-testid="partition-stuck"
        title={since ? `Committed offset unchanged since ${formatUtc(since)}` : undefined}
      >
        stuck {formatSpan(stuckForMs)}
      </span>
    );
  }
  if (lag === 0n) return <span className="badge badge-ok">caught up</span>;
  return (
    <span
      className="badge"
      title="Behind, but its committed offset moves (or has not stood still long enough to call it stuck)"
    >
      behind
      {since ? (
        <>
          {" "}
          · unchanged <RelativeTime value={since.toISOString()} />
        </>
      ) : null}
    </span>
  );
}
