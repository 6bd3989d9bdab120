import Link from "@/components/ui/link";
import { AUDIT_CATEGORY_LABELS } from "@/lib/audit-log/categories";

/** The views of the log, each one click away; the first is the default (no `category` in the URL). */
const VIEWS: Array<{ value: string; label: string; title: string }> = [
  {
    value: "",
    label: "Operations and administration",
    title: "What was done to letters, queues and jobs, and to the console's users and settings",
  },
  {
    value: "operations",
    label: AUDIT_CATEGORY_LABELS.operations,
    title: "Redrives, discards, repairs, restores, skips, scans",
  },
  {
    value: "administration",
    label: AUDIT_CATEGORY_LABELS.administration,
    title: "Users, masking and triage rules, owners, alert rules, API tokens",
  },
  {
    value: "access",
    label: AUDIT_CATEGORY_LABELS.access,
    title: "Sign-ins, DLQ and letter views, payload views and reveals, exports",
  },
  { value: "all", label: "Everything", title: "Every entry" },
];

/**
 * The log's category views as links that keep the other filters (an action chosen overrides the
 * category, so a click on a view drops it, as it drops the page position).
 */
export function AuditCategoryFilter({
  current,
  query,
}: {
  /** The `category` of the URL when no action is chosen ("" for the default), or null when an action is. */
  current: string | null;
  query: URLSearchParams;
}) {
  return (
    <nav className="segmented" aria-label="Audit categories" data-testid="audit-category">
      {VIEWS.map((v) => {
        const q = new URLSearchParams(query);
        q.delete("action");
        q.delete("before");
        q.delete("category");
        if (v.value) q.set("category", v.value);
        return (
          <Link
            key={v.value || "default"}
            className="btn btn-small"
            href={`/audit${q.size ? `?${q}` : ""}`}
            aria-current={current === v.value ? "true" : undefined}
            title={v.title}
          >
            {v.label}
          </Link>
        );
      })}
    </nav>
  );
}
