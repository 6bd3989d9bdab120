import type { ReactNode } from "react";
import { SEVERITY_BADGE } from "@/lib/operations/ui-figures";

export function SeverityBadge({ severity, children }: { severity: string; children?: ReactNode }) {
  return (
    <span className={SEVERITY_BADGE[severity] ?? "badge"} data-testid="severity" data-severity={severity}>
      {children ?? severity}
    </span>
  );
}
