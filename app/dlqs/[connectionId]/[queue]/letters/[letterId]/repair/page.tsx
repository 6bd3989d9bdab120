import type { Metadata } from "next";
import { dlqProblem } from "@/components/dlq/dlq-problem";
import { DlqCrumbs, ProblemPage } from "@/components/jobs/dlq-page";
import { RepairForm } from "@/components/repair/repair-form";
import { wholeText } from "@/components/repair/edit";
import { CopyButton } from "@/components/ui/copy-button";
import { EscapeBack } from "@/components/ui/escape-back";
import { authorizePage } from "@/lib/auth/authorize-page";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadConfig } from "@/lib/config";
import { decodeParam, letterHref } from "@/lib/dlq/links";
import { VIEW_MAX_BODY_BYTES, viewLetter, type ViewLetterResult } from "@/lib/dlq/view-letter";
import { digestLabel, formatBytes } from "@/lib/format";
import { repairEnabled } from "@/lib/repair/policy";
import { planRepair, type RepairPlan } from "@/lib/repair/use-cases";
import { asAppError } from "@/lib/errors";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Repair and resubmit" };

type Params = { connectionId: string; queue: string; letterId: string };

/**
 * Repair and resubmit one letter, for admins where the console's `repair` switch covers
 * the DLQ. The page reads the letter as its own page does (masked for the role) and the repair's
 * frame from planRepair (locked fields, origin, payload kind, the broker's size limit); the editor,
 * the preview and the send are the client form's. No loading.tsx wraps this segment: a refusal must
 * answer 403 before anything streams (lib/auth/authorize-page.ts).
 */
export default async function RepairPage({ params }: { params: Promise<Params> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const letterId = decodeParam(p.letterId);
  const back = letterHref(connectionId, queue, letterId);
  const actor = await requirePageActor(`${back}/repair`);
  const meta = await requestMeta();
  // Audited as the preview the page would make (letter.repair_plan); 403 through ./forbidden.tsx.
  await authorizePage(actor, "letter:repair", {
    action: "letter.repair_plan",
    connectionId,
    queue,
    target: letterId,
    meta,
  });

  const crumbs = (
    <DlqCrumbs connectionId={connectionId} queue={queue}>
      <span className="mono">{letterId}</span> · repair
    </DlqCrumbs>
  );
  const backLink = { href: back, label: "← Back to the letter" };
  const problem = (title: string, message: string, testId?: string) => (
    <ProblemPage crumbs={crumbs} title={title} message={message} back={backLink} testId={testId} />
  );

  // Checked before anything is read, so opening the page on a DLQ the switch leaves off reads nothing.
  if (!repairEnabled(loadConfig().repair, connectionId, queue)) {
    return problem(
      "Repair is not enabled for this DLQ.",
      "Repair and resubmit is off by default. The console's configuration (repair: a list of connection and DLQ patterns) names the DLQs where admins may use it; this one is not among them. The letter was not read or changed.",
      "repair-disabled",
    );
  }

  let plan: RepairPlan;
  let view: ViewLetterResult;
  try {
    plan = await planRepair(actor, meta, { connectionId, queue, letterId });
    view = await viewLetter(actor, meta, { connectionId, queue, letterId });
  } catch (e) {
    const dlq = dlqProblem(e, { connectionId, queue, back: backLink });
    if (dlq) {
      return (
        <main className="page">
          {crumbs}
          {dlq}
        </main>
      );
    }
    const err = asAppError(e);
    if (!err) throw e;
    const title =
      err.code === "forbidden:repair-disabled"
        ? "Repair is not enabled for this DLQ."
        : err.type === "not_found"
          ? "This letter is no longer in the DLQ."
          : "This letter cannot be repaired here.";
    return problem(
      title,
      err.userMessage,
      err.code === "forbidden:repair-disabled" ? "repair-disabled" : "repair-problem",
    );
  }
  const l = view.letter;
  if (!l)
    return problem(
      "This letter is no longer in the DLQ.",
      "It was redriven, discarded, expired or consumed since it was read. Nothing was changed.",
      "repair-problem",
    );

  const kind = plan.letter.payloadKind;
  const initialText =
    kind !== "binary" && wholeText(l.payload, l.bodySize, VIEW_MAX_BODY_BYTES) ? l.payload!.text : null;
  const digest = digestLabel(plan.letter.sha256);
  return (
    <main className="page">
      <EscapeBack href={back} />
      {crumbs}
      <div className="page-head">
        <h1>Repair and resubmit</h1>
        <span className="meta">
          The repaired copy is sent first; only once the broker confirms it is the original archived (encrypted) and
          removed from <span className="mono">{queue}</span>.
        </span>
      </div>
      <section className="card" data-testid="repair-identity">
        <h2>The letter</h2>
        <table className="kv grid">
          <tbody>
            <tr>
              <th scope="row">Letter id</th>
              <td className="wrap-anywhere">
                <span className="mono" data-testid="repair-letter-id">
                  {plan.letter.id}
                </span>{" "}
                <CopyButton text={plan.letter.id} />
              </td>
            </tr>
            {plan.letter.messageId ? (
              <tr>
                <th scope="row">Message id</th>
                <td className="mono wrap-anywhere">{plan.letter.messageId}</td>
              </tr>
            ) : null}
            {plan.letter.correlationId ? (
              <tr>
                <th scope="row">Correlation id</th>
                <td className="mono wrap-anywhere">{plan.letter.correlationId}</td>
              </tr>
            ) : null}
            <tr>
              <th scope="row">DLQ</th>
              <td className="mono wrap-anywhere">{queue}</td>
            </tr>
            <tr>
              <th scope="row">Payload</th>
              <td>
                {kind === "json" ? "JSON" : kind === "text" ? "text" : "binary"}, {formatBytes(plan.letter.bodySize)}
                {plan.letter.contentType ? <span className="muted"> ({plan.letter.contentType})</span> : null}
              </td>
            </tr>
            <tr>
              <th scope="row" title={digest.title}>
                {digest.label}
              </th>
              <td className="mono wrap-anywhere">{plan.letter.sha256}</td>
            </tr>
          </tbody>
        </table>
      </section>
      <RepairForm
        connectionId={connectionId}
        queue={queue}
        letterId={plan.letter.id}
        payloadKind={kind}
        initialText={initialText}
        payloadNote={l.payload?.note ?? null}
        maskedCount={l.masking.maskedCount}
        canReveal={can(actor.role, "payload:reveal")}
        headers={l.headers}
        properties={l.properties}
        locked={plan.locked}
        originQueue={plan.originQueue}
        maxBodyBytes={plan.maxBodyBytes}
        viewMaxBytes={VIEW_MAX_BODY_BYTES}
        bodySize={plan.letter.bodySize}
        backHref={back}
      />
    </main>
  );
}
