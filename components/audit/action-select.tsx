"use client";

import type { AuditCategory } from "@/lib/audit-log/categories";
import { AUDIT_CATEGORY_LABELS } from "@/lib/audit-log/categories";

/**
 * The action filter: the actions the log holds, by category, under their readable labels. Choosing
 * one applies it at once (the form's Filter button does the same without JavaScript).
 */
export function AuditActionSelect({
  value,
  groups,
}: {
  value: string;
  groups: Array<{ category: AuditCategory; actions: Array<{ action: string; label: string }> }>;
}) {
  const known = groups.some((g) => g.actions.some((a) => a.action === value));
  return (
    <select
      id="audit-action"
      name="action"
      defaultValue={value}
      data-testid="audit-action"
      onChange={(e) => e.currentTarget.form?.requestSubmit()}
    >
      <option value="">Any action</option>
      {value && !known ? (
        <option value={value}>
          {value.endsWith(".") || value.endsWith("*") ? `${value} (every action of this area)` : value}
        </option>
      ) : null}
      {groups.map((g) => (
        <optgroup key={g.category} label={AUDIT_CATEGORY_LABELS[g.category]}>
          {g.actions.map((a) => (
            <option key={a.action} value={a.action}>
              {a.label}
            </option>
          ))}
        </optgroup>
      ))}
    </select>
  );
}
