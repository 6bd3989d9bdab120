import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { RulesTable } from "@/components/alerts/rules-table";
import { OperationsPage } from "@/components/jobs/operations-page";
import { listAlertRules } from "@/lib/alerts/use-cases";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadOrProblem } from "@/lib/use-case/app-error";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Alerts" };

/** Alert rules with their state and last message (ops:read); admins create rules here. */
export default async function AlertsPage() {
  const actor = await requirePageActor("/alerts");
  const { value: rules, problem } = await loadOrProblem(async () => listAlertRules(actor, await requestMeta()));
  return (
    <OperationsPage
      title="Alerts"
      note="One message when a rule starts firing for a DLQ and one when it resolves, posted as Slack-compatible JSON. Webhooks show only their origin."
      problem={problem}
    >
      {can(actor.role, "ops:manage") ? (
        <p>
          <Link className="btn btn-primary" href="/alerts/new" data-testid="new-alert-rule">
            New rule
          </Link>
        </p>
      ) : null}
      <RulesTable rules={rules ?? []} />
    </OperationsPage>
  );
}
