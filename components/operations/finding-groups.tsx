import Link from "@/components/ui/link";
import { formatCount } from "@/lib/format";
import type { FindingGroup } from "@/lib/operations/finding-groups";
import { healthHref } from "@/lib/operations/ui-links";
import { AcknowledgeKindButton } from "./acknowledge-button";
import { FindingsTable } from "./findings-table";
import { SeverityBadge } from "./severity-badge";
import styles from "./findings.module.css";
import { VisibleText } from "@/components/ui/visible-text";

/** DLQs named on a group's line before the rest fold into "+N more". */
const DLQS_SHOWN = 6;

/**
 * Findings grouped by kind: one block per kind, worst first, with its count, the words its
 * findings share, the affected DLQs and, for operators, one button that acknowledges them all.
 * Every finding stays reachable under "each finding". Broker data is rendered as text only.
 */
export function FindingGroups({
  groups,
  canAcknowledge,
  connectionNames,
  connectionId,
  state,
}: {
  groups: FindingGroup[];
  canAcknowledge: boolean;
  connectionNames: Record<string, string>;
  /** The connection the page is filtered to: acknowledge-all stays within it. */
  connectionId?: string;
  /** "pending": findings nobody has acknowledged yet; "seen": acknowledged or resolved. */
  state: "pending" | "seen";
}) {
  return (
    <div className={styles.groups} data-testid={`finding-groups-${state}`}>
      {groups.map((g) => {
        const open = g.findings.filter((f) => !f.resolvedAt && !f.acknowledgedAt).length;
        const many = g.dlqs.length > DLQS_SHOWN;
        return (
          <section
            key={g.code}
            className={styles.group}
            data-testid="finding-group"
            data-code={g.code}
            data-severity={g.severity}
            data-count={g.findings.length}
            data-state={state}
            aria-label={`${g.findings.length} ${g.severity} finding${g.findings.length === 1 ? "" : "s"}: ${g.code}`}
          >
            <div className={styles.head}>
              <SeverityBadge severity={g.severity} />
              <strong className={styles.count} data-testid="finding-group-count">
                {formatCount(g.findings.length)}×
              </strong>
              <span className="mono">{g.code}</span>
              <span className="spacer" />
              {canAcknowledge && state === "pending" && open > 0 ? (
                <AcknowledgeKindButton code={g.code} count={open} connectionId={connectionId} />
              ) : null}
            </div>
            <p className={styles.why} data-testid="finding-group-why">
              {g.why ?? <span className="muted">Each finding says why in its own words: see each finding below.</span>}
            </p>
            {g.fix ? (
              <p className={styles.fix} data-testid="finding-group-fix">
                <span className="muted">Fix: </span>
                {g.fix}
              </p>
            ) : null}
            {g.dlqs.length || g.withoutDlq ? (
              <div className={styles.dlqs} data-testid="finding-group-dlqs">
                <span className="muted">
                  {g.dlqs.length ? `${formatCount(g.dlqs.length)} DLQ${g.dlqs.length === 1 ? "" : "s"}: ` : ""}
                </span>
                <DlqLinks dlqs={g.dlqs.slice(0, DLQS_SHOWN)} connectionNames={connectionNames} />
                {many ? (
                  <details className={styles.more}>
                    <summary data-testid="finding-group-more">+{formatCount(g.dlqs.length - DLQS_SHOWN)} more</summary>
                    <DlqLinks dlqs={g.dlqs.slice(DLQS_SHOWN)} connectionNames={connectionNames} />
                  </details>
                ) : null}
                {g.withoutDlq ? (
                  <span className="muted">
                    {g.dlqs.length ? " · " : ""}
                    {formatCount(g.withoutDlq)} broker-wide
                  </span>
                ) : null}
              </div>
            ) : null}
            <details className={styles.each}>
              <summary data-testid="finding-group-each">Each finding ({formatCount(g.findings.length)})</summary>
              <FindingsTable
                findings={g.findings}
                canAcknowledge={canAcknowledge}
                connectionNames={connectionNames}
                empty=""
              />
            </details>
          </section>
        );
      })}
    </div>
  );
}

function DlqLinks({
  dlqs,
  connectionNames,
}: {
  dlqs: Array<{ connectionId: string; queue: string }>;
  connectionNames: Record<string, string>;
}) {
  return (
    <>
      {dlqs.map((d, i) => (
        <span key={`${d.connectionId}\u0000${d.queue}`}>
          {i > 0 ? ", " : ""}
          <Link
            href={healthHref(d.connectionId, d.queue)}
            className="mono"
            data-testid="finding-group-dlq"
            title={`${d.queue} on ${connectionNames[d.connectionId] ?? d.connectionId}`}
          >
            <VisibleText text={d.queue} />
          </Link>
        </span>
      ))}
    </>
  );
}
