import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { RuleForm } from "@/components/alerts/rule-form";
import { alertFormOptions } from "@/lib/alerts/use-cases";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "New alert rule" };

export default async function NewAlertRulePage() {
  const actor = await requirePageActor("/alerts/new");
  // Before anything streams, so a refusal answers 403 (../forbidden.tsx); audited as alert.rule_create.
  await authorizePage(actor, "ops:manage", { action: "alert.rule_create", meta: await requestMeta() });
  const options = await alertFormOptions(actor, await requestMeta());
  return (
    <main className="page">
      <div className="breadcrumbs">
        <Link href="/alerts">Alerts</Link> / new rule
      </div>
      <div className="page-head">
        <h1>New alert rule</h1>
        <span className="meta">The webhook target is checked when you save, and again before every message.</span>
      </div>
      <RuleForm connections={options.connections} teams={options.teams} />
    </main>
  );
}
