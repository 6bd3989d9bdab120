import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { RuleForm } from "@/components/alerts/rule-form";
import { Problem } from "@/components/ui/problem";
import { alertFormOptions, viewAlertRule } from "@/lib/alerts/use-cases";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { decodeParam } from "@/lib/dlq/links";
import { asAppError } from "@/lib/errors";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Change alert rule" };

export default async function EditAlertRulePage({ params }: { params: Promise<{ id: string }> }) {
  const id = decodeParam((await params).id);
  const actor = await requirePageActor(`/alerts/${encodeURIComponent(id)}/edit`);
  // Before anything streams, so a refusal answers 403 (../../forbidden.tsx); audited as alert.rule_update.
  await authorizePage(actor, "ops:manage", { action: "alert.rule_update", target: id, meta: await requestMeta() });
  let view: Awaited<ReturnType<typeof viewAlertRule>>;
  try {
    view = await viewAlertRule(actor, await requestMeta(), { id });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return (
      <main className="page">
        <Problem
          title={err.type === "not_found" ? "There is no such alert rule." : "The alert rule could not be read."}
          back={{ href: "/alerts", label: "← Alerts" }}
        >
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const options = await alertFormOptions(actor, await requestMeta());
  const { rule } = view;
  return (
    <main className="page">
      <div className="breadcrumbs">
        <Link href="/alerts">Alerts</Link> / <Link href={`/alerts/${rule.id}`}>{rule.name}</Link> / change
      </div>
      <div className="page-head">
        <h1>Change alert rule</h1>
        <span className="meta">
          Disabling the rule, or changing what it watches, starts it over without messages; a new threshold resolves
          DLQs that no longer cross it.
        </span>
      </div>
      <RuleForm initial={rule} connections={options.connections} teams={options.teams} />
    </main>
  );
}
