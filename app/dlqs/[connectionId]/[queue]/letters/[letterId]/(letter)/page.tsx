import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { DeathHistory } from "@/components/dlq/death-history";
import { WrappedIn } from "@/components/dlq/wrapped-in";
import { ReadRaisedNote } from "@/components/dlq/read-raised";
import { dlqProblem } from "@/components/dlq/dlq-problem";
import { LetterEntries } from "@/components/dlq/entries-table";
import { HandledBadge } from "@/components/dlq/handled-badge";
import { HiddenCharsBanner, letterTexts } from "@/components/dlq/hidden-chars-banner";
import { PayloadPanel } from "@/components/dlq/payload-panel";
import { RevealPanel } from "@/components/dlq/reveal-panel";
import { SnapshotLetterView } from "@/components/dlq/snapshot-letter-view";
import { CopyButton } from "@/components/ui/copy-button";
import { EscapeBack } from "@/components/ui/escape-back";
import { VisibleText } from "@/components/ui/visible-text";
import { RelativeTime } from "@/components/ui/relative-time";
import { archivedOriginalHref } from "@/components/repair/edit";
import { repairProvenance } from "@/components/repair/provenance";
import { RepairTrailNotes } from "@/components/repair/repair-trail";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { letterDiscardHref } from "@/lib/discard/ui-links";
import { filledFields } from "@/lib/letter/failure-fields";
import { decodeParam, dlqHref, letterHref, payloadHref } from "@/lib/dlq/links";
import { letterKnown } from "@/lib/dlq/letter-known";
import { viewLetter, type ViewLetterResult } from "@/lib/dlq/view-letter";
import { letterLabels } from "@/lib/dlq/wording";
import { DlqCrumbs } from "@/components/jobs/dlq-page";
import { digestLabel } from "@/lib/format";
import { loadConfig } from "@/lib/config";
import { repairEnabled } from "@/lib/repair/policy";
import { repairTrail } from "@/lib/repair/trail";

export const dynamic = "force-dynamic";

type Params = { connectionId: string; queue: string; letterId: string };

export async function generateMetadata({ params }: { params: Promise<Params> }): Promise<Metadata> {
  const p = await params;
  return { title: `Letter ${decodeParam(p.letterId).slice(0, 24)} · ${decodeParam(p.queue)}` };
}

function Field({
  label,
  children,
  copy,
  testId,
}: {
  label: string;
  children: ReactNode;
  copy?: string | null;
  testId?: string;
}) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td className="wrap-anywhere" data-testid={testId}>
        {children}
        {copy ? (
          <>
            {" "}
            <CopyButton text={copy} />
          </>
        ) : null}
      </td>
    </tr>
  );
}

const dash = <span className="muted">—</span>;

export default async function LetterPage({ params }: { params: Promise<Params> }) {
  const p = await params;
  const connectionId = decodeParam(p.connectionId);
  const queue = decodeParam(p.queue);
  const letterId = decodeParam(p.letterId);
  const self = letterHref(connectionId, queue, letterId);
  const back = dlqHref(connectionId, queue);
  const actor = await requirePageActor(self);

  const crumbs = (
    <DlqCrumbs connectionId={connectionId} queue={queue}>
      <span className="mono">{letterId}</span>
    </DlqCrumbs>
  );

  let r: ViewLetterResult;
  try {
    r = await viewLetter(actor, await requestMeta(), { connectionId, queue, letterId });
  } catch (e) {
    const problem = dlqProblem(e, { connectionId, queue, back: { href: back, label: "← Back to the DLQ" } });
    if (!problem) throw e;
    return (
      <main className="page">
        {crumbs}
        {problem}
      </main>
    );
  }

  if (r.needsConfirmation && r.dlq.readRisk) {
    return (
      <main className="page">
        {crumbs}
        <EscapeBack href={back} />
        <SnapshotLetterView connectionId={connectionId} queue={queue} s={r.snapshot ?? null} canReveal={r.canReveal} />
      </main>
    );
  }

  const l = r.letter;
  if (!l) {
    // The audit log knows whether this letter was repaired, or is a repair's copy that has not come back.
    const trail = await repairTrail(actor, await requestMeta(), { connectionId, queue, letterId });
    const known = trail.repairedAs !== null || trail.copyOf !== null;
    if (!known && !(await letterKnown(connectionId, queue, letterId))) notFound();
    return (
      <main className="page">
        <EscapeBack href={back} />
        {crumbs}
        <div className="banner banner-warn" role="status" data-testid="letter-gone">
          <p>
            <strong>{known ? "Not in this DLQ." : "Letter no longer in this DLQ."}</strong>
          </p>
          <p>
            {known
              ? null
              : "It was redriven, discarded, expired or consumed since the list was read. Nothing else changed. "}
            <Link href={back}>Back to the DLQ</Link> to see what is there now.
          </p>
        </div>
        <RepairTrailNotes connectionId={connectionId} trail={trail} />
      </main>
    );
  }

  const f = l.failure;
  const labels = letterLabels(r.connection.capabilities, r.connection.vocabulary);
  // Facts this broker did not record for this letter are left out rather than shown as dashes.
  const has = filledFields(f);
  const stable = r.connection.capabilities.stableOrder !== false;
  // The UI only reflects the switch and the permission: the repair page and its use cases check both again.
  const mayRepair =
    can(actor.role, "letter:repair") && !l.handled && repairEnabled(loadConfig().repair, connectionId, queue);
  const repaired = repairProvenance(l.headers);
  // A letter the DLQ keeps after the console handled it (Kafka) may have been repaired: where its copy went.
  const handledTrail = l.handled
    ? await repairTrail(actor, await requestMeta(), { connectionId, queue, letterId })
    : null;
  return (
    <main className="page">
      <EscapeBack href={back} />
      {crumbs}
      <div className="page-head">
        <h1>Letter</h1>
        <code className="wrap-anywhere" data-testid="letter-id">
          {l.id}
        </code>
        <CopyButton text={l.id} label="Copy id" testId="copy-letter-id" />
        <HandledBadge handled={l.handled} />
        {can(actor.role, "discard:run") && !l.handled ? (
          <Link
            className="btn btn-small btn-danger"
            href={letterDiscardHref(connectionId, queue, l)}
            data-testid="letter-discard"
          >
            Discard…
          </Link>
        ) : null}
        {mayRepair ? (
          <Link className="btn btn-small" href={`${self}/repair`} data-testid="letter-repair">
            Repair and resubmit…
          </Link>
        ) : null}
        <span className="meta">
          position {l.position + 1}
          {stable ? "" : " in this read"} in <span className="mono">{queue}</span> · read without removing it
        </span>
      </div>
      {l.handled ? (
        <div className="banner banner-info" role="status" data-testid="handled-note">
          The console has already {l.handled.outcome} this letter; the {labels.queue} still keeps it because it cannot
          remove a single letter.
        </div>
      ) : null}
      {handledTrail?.repairedAs ? (
        <RepairTrailNotes connectionId={connectionId} trail={{ repairedAs: handledTrail.repairedAs, copyOf: null }} />
      ) : null}
      {repaired ? (
        <div className="banner banner-info" role="status" data-testid="repaired-note">
          Repaired copy of{" "}
          <Link
            href={archivedOriginalHref(repaired.operationId, { connectionId, id: repaired.originalMessageId })}
            className="mono"
            data-testid="repaired-original-link"
          >
            {repaired.originalMessageId ?? "a letter without a message id"}
          </Link>{" "}
          <span className="muted">(repair operation {repaired.operationId}; the original is in the archive)</span>
        </div>
      ) : null}
      <HiddenCharsBanner texts={letterTexts(l)} queue={queue} />
      {l.warnings.map((w) => (
        <div key={w.code} className="banner banner-warn" role="status" data-testid="letter-warning">
          <strong>{w.message}</strong>
        </div>
      ))}
      <div className="grid-2">
        <section className="card" data-testid="letter-summary">
          <h2>Why it died</h2>
          <table className="kv grid">
            <tbody>
              {has.has("deadLetteredAt") ? (
                <Field label="Time of death">
                  <RelativeTime value={f.deadLetteredAt} full testId="letter-died-at" />
                </Field>
              ) : null}
              <Field label="Reason" testId="letter-reason">
                {f.reason ? <VisibleText text={f.reason} /> : dash}
              </Field>
              <Field label={labels.origin} testId="letter-origin">
                {f.originQueue ? (
                  <span className="mono">
                    <VisibleText text={f.originQueue} />
                  </span>
                ) : (
                  dash
                )}
              </Field>
              {has.has("exchange") ? (
                <Field label="Exchange">
                  {f.exchange === "" ? (
                    <span className="muted">(default exchange)</span>
                  ) : (
                    <span className="mono">{f.exchange}</span>
                  )}
                </Field>
              ) : null}
              {has.has("routingKeys") ? (
                <Field label="Routing keys">
                  <span className="mono">{f.routingKeys.join(", ")}</span>
                </Field>
              ) : null}
              {has.has("count") ? (
                <Field label={labels.count} testId="letter-count">
                  {f.count}
                  <ReadRaisedNote raised={l.readRaised} field="count" label={labels.count} />
                </Field>
              ) : null}
              {has.has("deliveryCount") ? (
                <Field label="Delivery count">
                  {f.deliveryCount}
                  <ReadRaisedNote raised={l.readRaised} field="deliveryCount" label="Delivery count" />
                </Field>
              ) : null}
              {has.has("exceptionClass") ? (
                <Field label="Exception class" copy={f.exceptionClass} testId="letter-exception-class">
                  <span className="mono">
                    <VisibleText text={f.exceptionClass ?? ""} />
                  </span>
                  <WrappedIn wrapperClass={f.wrapperClass} />
                </Field>
              ) : null}
              {has.has("exceptionMessage") ? (
                <Field label="Exception message" copy={f.exceptionMessage}>
                  <VisibleText text={f.exceptionMessage ?? ""} />
                </Field>
              ) : null}
            </tbody>
          </table>
        </section>
        <section className="card" data-testid="letter-ids">
          <h2>Identity</h2>
          <table className="kv grid">
            <tbody>
              <Field label="Letter id" copy={l.id}>
                <span className="mono">
                  <VisibleText text={l.id} />
                </span>
              </Field>
              {l.messageId ? (
                <Field label="Message id" copy={l.messageId}>
                  <span className="mono">
                    <VisibleText text={l.messageId} />
                  </span>
                </Field>
              ) : null}
              {l.correlationId ? (
                <Field label="Correlation id" copy={l.correlationId}>
                  <span className="mono">
                    <VisibleText text={l.correlationId} />
                  </span>
                </Field>
              ) : null}
              {l.orderingKey ? (
                <Field label="Ordering key" copy={l.orderingKey}>
                  <span className="mono">
                    <VisibleText text={l.orderingKey} />
                  </span>
                </Field>
              ) : null}
              {l.contentType ? <Field label="Content type">{l.contentType}</Field> : null}
              <Field label={digestLabel(l.sha256).label} copy={l.sha256}>
                <span className="mono">{l.sha256}</span>
              </Field>
            </tbody>
          </table>
        </section>
      </div>
      {f.stackTrace ? (
        <section className="card section" data-testid="stack-trace">
          <div className="card-head">
            <h2>Stack trace</h2>
            <span className="spacer" />
            <CopyButton text={f.stackTrace} label="Copy stack trace" />
          </div>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container; tabIndex lets keyboard users focus and scroll a long trace */}
          <pre className="block stack" tabIndex={0}>
            <VisibleText text={f.stackTrace} />
          </pre>
        </section>
      ) : null}
      <DeathHistory history={l.history} countLabel={labels.count} queueLabel={labels.queue} />
      <PayloadPanel
        view={l.payload}
        masked={l.masking.payloadMasked}
        maskedDetail={{
          payloadMaskedCount: l.masking.payloadMaskedCount,
          byRule: l.masking.byRule,
          canReveal: r.canReveal,
        }}
        reveal={
          r.canReveal && l.masking.maskedCount > 0 ? (
            <RevealPanel
              connectionId={connectionId}
              queue={queue}
              letterId={l.id}
              maskedCount={l.masking.maskedCount}
              size={l.bodySize}
              shown={{ headers: l.headers, properties: l.properties, exceptionMessage: f.exceptionMessage }}
            />
          ) : null
        }
        sensitive={l.masking.sensitive}
        canDownload={r.canReadPayload}
        size={l.bodySize}
        sha256={l.sha256}
        contentType={l.contentType}
        contentEncoding={l.contentEncoding}
        downloadHref={payloadHref(connectionId, queue, l.id)}
      />
      <LetterEntries letter={l} canReveal={r.canReveal} />
    </main>
  );
}
