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
  return (
    <>
      <label htmlFor="archive-connection">
        Connection
        <select
          id="archive-connection"
          name="connectionId"
          defaultValue={connectionId}
          onChange={submit}
          data-testid="archive-filter-connection"
        >
          <option value="">any ({connections.size})</option>
          {connectionId && !connections.has(connectionId) ? (
            <option value={connectionId}>{connectionId} (none)</option>
          ) : null}
          {[...connections].map(([c, n]) => (
            <option key={c} value={c}>
              {c} ({formatCount(n)})
            </option>
          ))}
        </select>
      </label>
      <label htmlFor="archive-queue">
        DLQ
        <select
          id="archive-queue"
          name="queue"
          defaultValue={queue}
          onChange={submit}
          data-testid="archive-filter-queue"
        >
          <option value="">any ({queues.size})</option>
          {queue && !queues.has(queue) ? <option value={queue}>{queue} (none)</option> : null}
          {[...queues].map(([q, n]) => (
            <option key={q} value={q}>
              {q} ({formatCount(n)})
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
