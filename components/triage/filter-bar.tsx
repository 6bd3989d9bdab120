"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { isoToUtcInput, triageHref, utcInputToIso, withFilter, type TriageView } from "@/lib/triage/view-params";

/** The filters of the letter set, applied to the URL on submit (so the view can be shared). */
export function FilterBar({ connectionId, queue, view }: { connectionId: string; queue: string; view: TriageView }) {
  const router = useRouter();
  const [f, setF] = useState({
    exceptionClass: view.exceptionClass ?? "",
    reason: view.reason ?? "",
    origin: view.origin ?? "",
    from: isoToUtcInput(view.from),
    to: isoToUtcInput(view.to),
    headerName: view.header?.name ?? "",
    headerValue: view.header?.value ?? "",
    q: view.q ?? "",
    gone: view.gone,
  });
  const [error, setError] = useState<string | null>(null);
  const set = (k: keyof typeof f) => (e: { target: { value: string; checked?: boolean; type?: string } }) =>
    setF((x) => ({ ...x, [k]: e.target.type === "checkbox" ? !!e.target.checked : e.target.value }));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const from = utcInputToIso(f.from);
    const to = utcInputToIso(f.to);
    if ((f.from && !from) || (f.to && !to)) return setError("Give times as date and time in UTC.");
    if (from && to && from > to) return setError("The time range ends before it starts.");
    if (!!f.headerName.trim() !== !!f.headerValue) return setError("A header filter needs both a name and a value.");
    setError(null);
    router.push(
      triageHref(
        connectionId,
        queue,
        withFilter(view, {
          exceptionClass: f.exceptionClass.trim() || null,
          reason: f.reason.trim() || null,
          origin: f.origin.trim() || null,
          from,
          to,
          header: f.headerName.trim() ? { name: f.headerName.trim(), value: f.headerValue } : null,
          q: f.q.trim() || null,
          gone: f.gone,
        }),
      ),
    );
  };

  return (
    <form className="filter-bar" onSubmit={submit} data-testid="filter-bar" aria-label="Filter letters">
      <div className="fb-row">
        <label className="fb-wide">
          <span>Text: exception, message, id</span>
          <input id="triage-q" value={f.q} onChange={set("q")} placeholder="Search  ( / )" data-testid="filter-q" />
        </label>
        <label>
          <span>Exception class</span>
          <input
            value={f.exceptionClass}
            onChange={set("exceptionClass")}
            className="mono"
            data-testid="filter-class"
          />
        </label>
        <label>
          <span>Reason</span>
          <input value={f.reason} onChange={set("reason")} data-testid="filter-reason" />
        </label>
        <label>
          <span>Origin</span>
          <input value={f.origin} onChange={set("origin")} className="mono" data-testid="filter-origin" />
        </label>
        <label>
          <span>Header name</span>
          <input value={f.headerName} onChange={set("headerName")} className="mono" data-testid="filter-header-name" />
        </label>
        <label>
          <span>= value</span>
          <input
            value={f.headerValue}
            onChange={set("headerValue")}
            className="mono"
            data-testid="filter-header-value"
          />
        </label>
      </div>
      <div className="fb-row">
        <label>
          <span>From (UTC)</span>
          <input type="datetime-local" value={f.from} onChange={set("from")} data-testid="filter-from" />
        </label>
        <label>
          <span>To (UTC)</span>
          <input type="datetime-local" value={f.to} onChange={set("to")} data-testid="filter-to" />
        </label>
        <label className="fb-check">
          <input type="checkbox" checked={f.gone} onChange={set("gone")} data-testid="filter-gone" />{" "}
          <span>include gone</span>
        </label>
        <button type="submit" className="btn btn-primary" data-testid="filter-apply">
          Apply
        </button>
        <span className="hint">Times are UTC. Filters go in the URL: share it to share this view.</span>
      </div>
      {error ? (
        <p className="form-error fb-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
