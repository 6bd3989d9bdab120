"use client";

import type { ArchiveDlq } from "@/lib/archive/queries";
import { formatCount } from "@/lib/format";

/**
 * The archive's connection and DLQ filters: lists of what the archive holds, with counts. The DLQ
 * list narrows to the chosen connection; a choice applies at once (the form's Filter button does
 * the same without JavaScript). A value from the URL the archive no longer holds stays selectable.
 */
export function ArchiveDlqFilter({
  dlqs,
  connectionId,
  queue,
}: {
  dlqs: ArchiveDlq[];
  connectionId: string;
  queue: string;
}) {
  const connections = new Map<string, number>();
  for (const d of dlqs) connections.set(d.connectionId, (connections.get(d.connectionId) ?? 0) + d.count);
  const queues = new Map<string, number>();
  for (const d of dlqs)
    if (!connectionId || d.connectionId === connectionId) queues.set(d.queue, (queues.get(d.queue) ?? 0) + d.count);
  const submit = (e: React.ChangeEvent<HTMLSelectElement>) => {
    const form = e.currentTarget.form;
    // A new connection: its own DLQs, not one of another connection's.
    if (e.currentTarget.name === "connectionId" && form) {
      const q = form.elements.namedItem("queue") as HTMLSelectElement | null;
      if (q) q.value = "";
    }
    form?.requestSubmit();
  };
  const selects = [
    { field: "connection", label: "Connection", name: "connectionId", value: connectionId, counts: connections },
    { field: "queue", label: "DLQ", name: "queue", value: queue, counts: queues },
  ];
  return (
    <>
      {selects.map((s) => (
        <CountSelect key={s.field} {...s} onChange={submit} />
      ))}
    </>
  );
}

/** One labelled select of values with their counts, "any" first; a chosen value no longer listed stays selectable. */
function CountSelect({
  field,
  label,
  name,
  value,
  counts,
  onChange,
}: {
  /** Names its id (`archive-<field>`) and test id (`archive-filter-<field>`). */
  field: string;
  label: string;
  name: string;
  value: string;
  counts: Map<string, number>;
  onChange: (e: React.ChangeEvent<HTMLSelectElement>) => void;
}) {
  return (
    <label htmlFor={`archive-${field}`}>
      {label}
      <select
        id={`archive-${field}`}
        name={name}
        defaultValue={value}
        onChange={onChange}
        data-testid={`archive-filter-${field}`}
      >
        <option value="">any ({counts.size})</option>
        {value && !counts.has(value) ? <option value={value}>{value} (none)</option> : null}
        {[...counts].map(([v, n]) => (
          <option key={v} value={v}>
            {v} ({formatCount(n)})
          </option>
        ))}
      </select>
    </label>
  );
}
