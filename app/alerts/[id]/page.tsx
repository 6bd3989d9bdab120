import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { AlertStates, DeliveryLog } from "@/components/alerts/delivery-log";
import { RuleControls } from "@/components/alerts/rule-controls";
import { Problem } from "@/components/ui/problem";
import { RelativeTime } from "@/components/ui/relative-time";
import { viewAlertRule } from "@/lib/alerts/use-cases";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { decodeParam } from "@/lib/dlq/links";
import { asAppError } from "@/lib/errors";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Alert rule" };

function Field({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td className="wrap-anywhere" data-testid={testId}>
        {children}
      </td>
    </tr>
  );
}

/** One rule: what it watches and for which DLQs, the DLQs it fires for, and its delivery log (ops:read); admin controls. */
export default async function AlertRulePage({ params }: { params: Promise<{ id: string }> }) {
  const id = decodeParam((await params).id);
  const actor = await requirePageActor(`/alerts/${encodeURIComponent(id)}`);
  let view: Awaited<ReturnType<typeof viewAlertRule>>;
  try {
    view = await viewAlertRule(actor, await requestMeta(), { id });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    if (err.type === "not_found") notFound();
    return (
      <main className="page">
        <Problem title="The alert rule could not be read." back={{ href: "/alerts", label: "← Alerts" }}>
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const { rule, states, deliveries } = view;
  const firing = states.filter((s) => s.state === "firing").length;
  return (
    <main className="page" data-testid="alert-rule-page">
      <div className="breadcrumbs">
        <Link href="/alerts">Alerts</Link> / rule
      </div>
      <div className="page-head">
        <h1 className="wrap-anywhere" data-testid="alert-rule-title">
          {rule.name}
        </h1>
        {!rule.enabled ? (
          <span className="badge">disabled</span>
        ) : firing > 0 ? (
          <span className="badge badge-danger">firing for {firing}</span>
        ) : (
          <span className="badge badge-ok">quiet</span>
        )}
      </div>
      {can(actor.role, "ops:manage") ? <RuleControls id={rule.id} name={rule.name} /> : null}
      <section className="card section">
        <table className="kv grid">
          <tbody>
            <Field label="Fires when" testId="alert-rule-condition">
              {rule.condition}
            </Field>
            <Field label="For" testId="alert-rule-scope">
              {rule.scope}
            </Field>
            <Field label="Posts to" testId="alert-rule-webhook-origin">
              <span className="mono">{rule.webhookOrigin}</span>{" "}
              <span className="muted small">(origin only: the path may hold a token)</span>
            </Field>
            <Field label="Created">
              <RelativeTime value={rule.createdAt} />
              {rule.createdBy ? ` by ${rule.createdBy}` : ""}
            </Field>
            <Field label="Changed">
              <RelativeTime value={rule.updatedAt} />
            </Field>
          </tbody>
        </table>
      </section>
      <section className="section">
        <h2>DLQs</h2>
        <AlertStates states={states} />
      </section>
      <section className="section">
        <h2>Delivery log</h2>
        <p className="hint">
          Newest 100 messages. A failed attempt is retried after 30 s, 2 min, 10 min, 1 h and 1 h, then given up.
        </p>
        <DeliveryLog deliveries={deliveries} />
      </section>
    </main>
  );
}
