"use client";

import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { triageHref, withFilter, type TriageView } from "@/lib/triage/view-params";

const KEYS = [
  { by: "group", label: "Exception" },
  { by: "origin", label: "Origin" },
  { by: "reason", label: "Reason" },
  { by: "class", label: "Class" },
] as const;

/** What the groups table groups by: the fingerprint (default), origin, reason, class or a header. */
export function GroupBy({ connectionId, queue, view }: { connectionId: string; queue: string; view: TriageView }) {
  const router = useRouter();
  const [header, setHeader] = useState(view.by.startsWith("header:") ? view.by.slice(7) : "");
  const at = (by: TriageView["by"]) =>
    triageHref(connectionId, queue, {
      ...withFilter(view, {}),
      after: view.after,
      by,
      sort: { key: "count", dir: "desc" },
    });
  return (
    <div className="group-by" data-testid="group-by">
      <span className="hint">Group by</span>
      <span className="segmented">
        {KEYS.map((k) => (
          <Link
            key={k.by}
            href={at(k.by)}
            className="btn btn-small"
            aria-current={view.by === k.by ? "true" : undefined}
            data-testid={`group-by-${k.by}`}
          >
            {k.label}
          </Link>
        ))}
      </span>
      <form
        className="field-inline"
        onSubmit={(e) => {
          e.preventDefault();
          const name = header.trim();
          if (name && !/\s/.test(name)) router.push(at(`header:${name}`));
        }}
      >
        <label className="sr-only" htmlFor="group-by-header">
          Group by a header
        </label>
        <input
          id="group-by-header"
          className={`mono${view.by.startsWith("header:") ? " is-current" : ""}`}
          value={header}
          onChange={(e) => setHeader(e.target.value)}
          placeholder="or a header name"
          style={{ width: 160 }}
          data-testid="group-by-header"
        />
        <button type="submit" className="btn btn-small">
          Group
        </button>
      </form>
    </div>
  );
}
