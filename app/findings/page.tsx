import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { FindingsFilter } from "@/components/operations/findings-filter";
import { FindingGroups } from "@/components/operations/finding-groups";
import { FindingsTable } from "@/components/operations/findings-table";
import { Problem } from "@/components/ui/problem";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { formatCount } from "@/lib/format";
import { groupFindings, splitByAcknowledgement } from "@/lib/operations/finding-groups";
import type { FindingRow } from "@/lib/operations/findings";
import { findingsHref, parseFindingsParams, type FindingsView } from "@/lib/operations/ui-links";
import { connectionChoices } from "@/lib/operations/ui-settings";
import { listFindings } from "@/lib/operations/use-cases";
import { asAppError } from "@/lib/errors";

export const metadata: Metadata = { title: "Findings" };
export const dynamic = "force-dynamic";

type Search = Record<string, string | string[] | undefined>;

const STATES: Array<{ state: FindingsView["state"]; label: string }> = [
  { state: "open", label: "Open" },
  { state: "resolved", label: "History (resolved)" },
  { state: "all", label: "All" },
];

/**
 * Configuration findings across every broker: faults that lose or risk dead letters, with why and
 * how to fix them. Open ones by default; a finding is resolved when the sampler no longer sees the
 * fault, and stays here as history.
 */
export default async function FindingsPage({ searchParams }: { searchParams: Promise<Search> }) {
  const parsed = parseFindingsParams(await searchParams);
  const actor = await requirePageActor(parsed.ok ? findingsHref(parsed.value) : "/findings");
  const head = (
    <div className="page-head">
      <h1>Findings</h1>
      <span className="meta">
        Broker configuration that loses or risks dead letters, checked by the sampler every round. A finding closes when
        the fault is fixed.
      </span>
    </div>
  );
  if (!parsed.ok) {
    return (
      <main className="page">
        {head}
        <Problem
          title="This link's options are not valid."
          back={{ href: "/findings", label: "← All open findings" }}
          testId="bad-params"
        >
          <p>{parsed.message}</p>
        </Problem>
      </main>
    );
  }
  const view = parsed.value;
  const connections = connectionChoices();
  let findings: FindingRow[];
  try {
    findings = await listFindings(actor, await requestMeta(), {
      state: view.state,
      ...(view.severity ? { severity: view.severity } : {}),
      ...(view.connection ? { connectionId: view.connection } : {}),
      ...(view.dlq ? { queue: view.dlq } : {}),
    });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return (
      <main className="page">
        {head}
        <Problem
          title={err.type === "bad_request" ? "This view cannot be shown." : "The findings could not be read."}
          back={{ href: "/findings", label: "← All open findings" }}
        >
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const names = Object.fromEntries(connections.map((c) => [c.id, c.name]));
  const filtered = !!(view.severity || view.connection || view.dlq);
  const canAck = can(actor.role, "ops:acknowledge");
  const empty =
    view.state === "resolved"
      ? "No finding has been resolved yet."
      : "No open findings: the sampler found nothing that loses or risks letters.";
  return (
    <main className="page">
      {head}
      <nav className="tabs findings-tabs" aria-label="Findings by state" data-testid="findings-tabs">
        {STATES.map((s) => (
          <Link
            key={s.state}
            href={findingsHref({ ...view, state: s.state })}
            aria-current={view.state === s.state ? "page" : undefined}
            data-testid={`findings-tab-${s.state}`}
          >
            {s.label}
          </Link>
        ))}
      </nav>
      <FindingsFilter key={findingsHref(view)} view={view} connections={connections} />
      <div className="toolbar">
        <strong className="match-count" data-testid="findings-count" data-count={findings.length}>
          {[
            formatCount(findings.length),
            view.state === "all" ? null : view.state,
            findings.length === 1 ? "finding" : "findings",
            filtered ? (findings.length === 1 ? "matches" : "match") : null,
          ]
            .filter(Boolean)
            .join(" ")}
        </strong>
        {!view.dlq && findings.length ? (
          <span className="hint" data-testid="findings-kinds">
            {kindsSummary(findings)}
          </span>
        ) : null}
        {findings.length >= 500 ? <span className="hint">showing the 500 most recently seen</span> : null}
        <span className="spacer" />
        {!can(actor.role, "ops:acknowledge") ? (
          <span className="hint">Operators and admins acknowledge findings.</span>
        ) : null}
      </div>
      {view.dlq ? (
        // One DLQ's findings are a handful of different kinds: listed one by one.
        <FindingsTable
          findings={findings}
          canAcknowledge={canAck}
          connectionNames={names}
          empty={filtered ? "No finding matches these filters." : empty}
        />
      ) : findings.length === 0 ? (
        <p className="hint" data-testid="findings-empty">
          {filtered ? "No finding matches these filters." : empty}
        </p>
      ) : view.state === "resolved" ? (
        <FindingGroups groups={groupFindings(findings)} canAcknowledge={false} connectionNames={names} state="seen" />
      ) : (
        <GroupedByAcknowledgement
          findings={findings}
          canAcknowledge={canAck}
          names={names}
          connectionId={view.connection ?? undefined}
          seenLabel={view.state === "open" ? "Acknowledged, still open" : "Acknowledged or resolved"}
        />
      )}
    </main>
  );
}

/** The kinds nobody has acknowledged yet first; the acknowledged ones folded below. */
function GroupedByAcknowledgement({
  findings,
  canAcknowledge,
  names,
  connectionId,
  seenLabel,
}: {
  findings: FindingRow[];
  canAcknowledge: boolean;
  names: Record<string, string>;
  connectionId?: string;
  seenLabel: string;
}) {
  const { pending, acknowledged } = splitByAcknowledgement(findings);
  const seenCount = acknowledged.reduce((n, g) => n + g.findings.length, 0);
  return (
    <>
      {pending.length ? (
        <FindingGroups
          groups={pending}
          canAcknowledge={canAcknowledge}
          connectionNames={names}
          connectionId={connectionId}
          state="pending"
        />
      ) : (
        <p className="hint" data-testid="findings-all-acknowledged">
          Every finding here has been acknowledged.
        </p>
      )}
      {acknowledged.length ? (
        <details data-testid="findings-seen">
          <summary>
            {seenLabel}: {formatCount(seenCount)} finding{seenCount === 1 ? "" : "s"} of{" "}
            {formatCount(acknowledged.length)} kind{acknowledged.length === 1 ? "" : "s"}
          </summary>
          <FindingGroups groups={acknowledged} canAcknowledge={false} connectionNames={names} state="seen" />
        </details>
      ) : null}
    </>
  );
}

/** "of 3 kinds, 2 critical": how many groups the list folds into and how many are critical. */
function kindsSummary(findings: FindingRow[]): string {
  const kinds = new Set(findings.map((f) => f.code)).size;
  const critical = findings.filter((f) => f.severity === "critical").length;
  return `of ${formatCount(kinds)} kind${kinds === 1 ? "" : "s"}${critical ? `, ${formatCount(critical)} critical` : ""}`;
}
