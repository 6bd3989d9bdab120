"use client";

import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { RelativeTime } from "@/components/ui/relative-time";
import type { PartitionSummary } from "@/lib/brokers/contract/dlq";
import { dlqHref } from "@/lib/dlq/links";
import { formatCount, formatRelative } from "@/lib/format";

interface Props {
  connectionId: string;
  queue: string;
  size: number;
  partitions: PartitionSummary[];
  partition: number | null;
  from: string | null;
  order: "oldest" | "newest";
  /** "offset", from the adapter's vocabulary. */
  positionWord: string;
  /** The server's clock when the partitions were read: option texts must render the same on both sides. */
  now: number;
}

function optionText(p: PartitionSummary, now: number) {
  const handled = p.handled ? `, ${formatCount(p.handled)} handled` : "";
  const oldest = p.oldestUnhandledAt ? `, oldest unhandled ${formatRelative(p.oldestUnhandledAt, now)}` : "";
  return `Partition ${p.partition}: ${formatCount(p.letters)} letters${handled}${oldest}`;
}

/**
 * Where a randomly accessible DLQ is read from: one partition or all, an optional start position,
 * oldest or newest first. Everything lives in the URL, so the view can be pasted.
 */
export function PositionControls(props: Props) {
  const { connectionId, queue, size, partitions, partition, from, order, positionWord, now } = props;
  const router = useRouter();
  const [fromText, setFromText] = useState(from ?? "");
  const [error, setError] = useState<string | null>(null);
  const href = (o: { partition?: number | null; from?: string | null; order?: "oldest" | "newest" }) =>
    dlqHref(connectionId, queue, { size, partition, from, order, ...o });
  const current = partitions.find((p) => p.partition === partition) ?? null;
  const shown = partitions.filter((p) => p.letters > 0 || p.partition === partition);
  const total = partitions.reduce((n, p) => n + p.letters, 0);

  return (
    <div className="position-controls" data-testid="position-controls">
      <label className="field-inline">
        <span>Partition</span>
        <select
          data-testid="partition-select"
          value={partition === null ? "" : String(partition)}
          onChange={(e) =>
            router.push(href({ partition: e.target.value === "" ? null : Number(e.target.value), from: null }))
          }
        >
          <option value="">
            All {formatCount(partitions.length)} partitions ({formatCount(total)} letters)
          </option>
          {shown.map((p) => (
            <option key={p.partition} value={p.partition}>
              {optionText(p, now)}
            </option>
          ))}
        </select>
      </label>
      <form
        className="field-inline"
        onSubmit={(e) => {
          e.preventDefault();
          const v = fromText.trim();
          if (v !== "" && !/^\d{1,19}$/.test(v)) {
            setError(`The ${positionWord} must be digits only, such as 1200.`);
            return;
          }
          setError(null);
          router.push(href({ from: v === "" ? null : v }));
        }}
      >
        <label className="field-inline">
          <span>From {positionWord}</span>
          <input
            data-testid="from-offset"
            inputMode="numeric"
            placeholder={partition === null ? "choose a partition" : order === "newest" ? "newest" : "oldest"}
            disabled={partition === null}
            value={fromText}
            onChange={(e) => setFromText(e.target.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "from-offset-error" : undefined}
            style={{ width: 150 }}
          />
        </label>
        <button type="submit" className="btn btn-small" disabled={partition === null} data-testid="from-offset-go">
          Go
        </button>
        {from ? (
          <Link className="btn btn-small btn-quiet" href={href({ from: null })}>
            Clear
          </Link>
        ) : null}
      </form>
      {/* biome-ignore lint/a11y/useSemanticElements: two links, not form fields: a fieldset would give them form semantics; role=group names the pair */}
      <span className="segmented" role="group" aria-label="Order">
        <Link
          className="btn btn-small"
          href={href({ order: "oldest" })}
          aria-current={order === "oldest" ? "true" : undefined}
          data-testid="order-oldest"
        >
          Oldest first
        </Link>
        <Link
          className="btn btn-small"
          href={href({ order: "newest" })}
          aria-current={order === "newest" ? "true" : undefined}
          data-testid="order-newest"
        >
          Newest first
        </Link>
      </span>
      {current ? (
        <span className="hint" data-testid="partition-facts">
          {positionWord}s {current.letters > 0 ? `${current.start}–${(BigInt(current.end) - 1n).toString()}` : "none"} ·{" "}
          {formatCount(current.letters)} letters · {formatCount(current.handled)} handled · oldest unhandled{" "}
          {current.oldestUnhandledAt ? <RelativeTime value={current.oldestUnhandledAt} /> : "none"}
        </span>
      ) : null}
      {error ? (
        <span className="form-error" id="from-offset-error" role="alert" data-testid="from-offset-error">
          {error}
        </span>
      ) : null}
    </div>
  );
}
