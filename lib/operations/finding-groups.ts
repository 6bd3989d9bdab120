/**
 * Findings grouped by kind (their code), so forty DLQs without an owner are one line and the
 * critical faults stand above them. Pure: the page groups what the use case listed.
 */
import type { FindingSeverity } from "@/lib/brokers/contract/inspection";
import type { FindingRow } from "./findings";

const RANK: Record<FindingSeverity, number> = { critical: 3, warning: 2, info: 1 };

export interface FindingGroup {
  code: string;
  /** The worst severity among the group's findings. */
  severity: FindingSeverity;
  findings: FindingRow[];
  /** Every affected DLQ once, in the order the findings were listed. */
  dlqs: Array<{ connectionId: string; queue: string }>;
  /** Findings that name no DLQ (a broker-wide fault). */
  withoutDlq: number;
  /** The words every finding of the group shares; null where they differ (each finding says its own). */
  why: string | null;
  fix: string | null;
}

/** Groups by code; the worst severity first, then the most findings, then the code. */
export function groupFindings(rows: FindingRow[]): FindingGroup[] {
  const by = new Map<string, FindingGroup>();
  for (const f of rows) {
    let g = by.get(f.code);
    if (!g) {
      g = { code: f.code, severity: f.severity, findings: [], dlqs: [], withoutDlq: 0, why: f.why, fix: f.fix };
      by.set(f.code, g);
    }
    g.findings.push(f);
    if (RANK[f.severity] > RANK[g.severity]) g.severity = f.severity;
    if (g.why !== f.why) g.why = null;
    if (g.fix !== f.fix) g.fix = null;
    if (f.queue === null) g.withoutDlq++;
    else if (!g.dlqs.some((d) => d.connectionId === f.connectionId && d.queue === f.queue))
      g.dlqs.push({ connectionId: f.connectionId, queue: f.queue });
  }
  return [...by.values()].sort(
    (a, b) =>
      RANK[b.severity] - RANK[a.severity] || b.findings.length - a.findings.length || a.code.localeCompare(b.code),
  );
}

/**
 * Open findings split by whether someone has said they saw them: the kinds still to acknowledge,
 * and those acknowledged (still open until the fault is fixed). A kind can be in both when a new
 * finding of it appeared after the others were acknowledged.
 */
export function splitByAcknowledgement(rows: FindingRow[]): { pending: FindingGroup[]; acknowledged: FindingGroup[] } {
  return {
    pending: groupFindings(rows.filter((f) => !f.acknowledgedAt && !f.resolvedAt)),
    acknowledged: groupFindings(rows.filter((f) => f.acknowledgedAt || f.resolvedAt)),
  };
}
