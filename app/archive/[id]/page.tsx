import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { ArchiveTable } from "@/components/archive/archive-table";
import { isRepairedOriginal, repairReason } from "@/components/archive/repaired";
import { DeathHistory } from "@/components/dlq/death-history";
import { LetterEntries } from "@/components/dlq/entries-table";
import { PayloadPanel } from "@/components/dlq/payload-panel";
import { CopyButton } from "@/components/ui/copy-button";
import { EscapeBack } from "@/components/ui/escape-back";
import { Problem } from "@/components/ui/problem";
import { RelativeTime } from "@/components/ui/relative-time";
import { archiveHref } from "@/lib/archive/params";
import { viewArchived, type ArchivedLetterDetail } from "@/lib/archive/use-cases";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { discardJobHref } from "@/lib/discard/ui-links";
import { asAppError } from "@/lib/errors";
import { decodeParam, dlqHref, letterHref } from "@/lib/dlq/links";
import { repairOfArchived } from "@/lib/repair/trail";
import { connectionLabels, connectionName } from "@/lib/dlq/describe-dlq";
import { digestLabel } from "@/lib/format";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Archived letter" };

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
const dash = <span className="muted">—</span>;

/** One archived letter: why and by whom it was discarded (or repaired, for a repair's original), its metadata and payload with the letter page's masking, and undo for admins. */
export default async function ArchivedLetterPage({ params }: { params: Promise<{ id: string }> }) {
  const id = decodeParam((await params).id);
  const actor = await requirePageActor(`/archive/${encodeURIComponent(id)}`);
  const back = archiveHref();
  let l: ArchivedLetterDetail;
  try {
    l = await viewArchived(actor, await requestMeta(), { id });
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    if (err.type === "not_found") notFound();
    return (
      <main className="page">
        <Problem
          title={
            err.type === "forbidden" ? "Your role cannot read the archive." : "The archived letter could not be read."
          }
          back={{ href: back, label: "← The archive" }}
        >
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const f = l.failure;
  // The broker's words, as on the letter page ("Original topic", "topic"); neutral when the connection is gone.
  const labels = connectionLabels(l.connectionId);
  // Masked values are revealed on the letter page only; the badge says who can.
  const canReveal = can(actor.role, "payload:reveal");
  // The original of a repair is archived like a discard, under the repair's operation id; it is named for what happened to it.
  const repaired = isRepairedOriginal(l.discardReason);
  const copy = repaired
    ? await repairOfArchived(actor, await requestMeta(), {
        connectionId: l.connectionId,
        queue: l.queue,
        letterId: l.letterId,
        operationId: l.discardJobId,
      })
    : null;
  const {
    headers: _h,
    properties: _p,
    failure: _f,
    history: _hi,
    payload: _pl,
    masking: _m,
    correlationId: _c,
    contentEncoding: _ce,
    orderingKey: _o,
    republishLimits,
    ...summary
  } = l;
  return (
    <main className="page">
      <EscapeBack href={back} />
      <div className="breadcrumbs">
        <Link href={back}>Archive</Link> / {connectionName(l.connectionId)} /{" "}
        <Link href={dlqHref(l.connectionId, l.queue)} className="mono">
          {l.queue}
        </Link>
      </div>
      <div className="page-head">
        <h1>Archived letter</h1>
        <code className="wrap-anywhere" data-testid="archived-letter-id">
          {l.letterId}
        </code>
        <CopyButton text={l.letterId} label="Copy id" />
        {l.restoreState === "restored" ? (
          <span className="badge badge-ok">put back</span>
        ) : (
          <span className="badge">archived</span>
        )}
        {repaired ? (
          <span
            className="badge badge-info"
            title="The original of a repaired letter: the repaired copy was sent on"
            data-testid="archived-repaired"
          >
            repaired
          </span>
        ) : null}
      </div>
      <div className="grid-2">
        <section className="card" data-testid="archived-discard">
          <h2>{repaired ? "Repair" : "Discard"}</h2>
          <table className="kv grid">
            <tbody>
              <Field label={repaired ? "Repaired" : "Discarded"}>
                <RelativeTime value={l.discardedAt} /> <span className="muted">({l.discardedAt})</span>
              </Field>
              <Field label="By" testId="archived-by">
                {l.discardedBy ?? dash}
              </Field>
              <Field label="Reason" testId="archived-reason">
                {repaired ? repairReason(l.discardReason) : l.discardReason}
              </Field>
              <Field label="Operation">
                {/* A repair's operation is not a discard job: its link is the archive of that operation's originals. */}
                <Link
                  href={
                    repaired
                      ? archiveHref({ operation: l.discardJobId })
                      : discardJobHref(l.connectionId, l.queue, l.discardJobId)
                  }
                  className="mono"
                  data-testid="archived-operation"
                >
                  {l.discardJobId}
                </Link>
              </Field>
              {copy ? (
                <Field label="Sent as" testId="archived-copy">
                  {copy.copyId ? <span className="mono">{copy.copyId}</span> : "a new message"} to{" "}
                  <span className="mono">{copy.destination ?? "its target"}</span>
                  {copy.copyLetterId ? (
                    <>
                      {" · "}
                      <Link
                        href={letterHref(l.connectionId, l.queue, copy.copyLetterId)}
                        data-testid="archived-copy-link"
                      >
                        the resubmitted message
                      </Link>
                    </>
                  ) : null}
                </Field>
              ) : null}
              <Field label="Kept until">
                <RelativeTime value={l.expiresAt} /> <span className="muted">({l.expiresAt})</span>
              </Field>
              {l.restoreState === "restored" ? (
                <Field label="Put back" testId="archived-restored">
                  <RelativeTime value={l.restoredAt} /> by {l.restoredBy}: {l.restoreReason}
                </Field>
              ) : null}
              {l.restoreState === "failed" ? <Field label="Last undo failed">{l.restoreError}</Field> : null}
            </tbody>
          </table>
        </section>
        <section className="card">
          <h2>Why it died</h2>
          <table className="kv grid">
            <tbody>
              <Field label="Reason">{f.reason ?? dash}</Field>
              <Field label={labels.origin} testId="archived-origin">
                {f.originQueue ? <span className="mono">{f.originQueue}</span> : dash}
              </Field>
              <Field label="Exception class">
                {f.exceptionClass ? <span className="mono">{f.exceptionClass}</span> : dash}
              </Field>
              {f.exceptionMessage ? <Field label="Exception message">{f.exceptionMessage}</Field> : null}
              <Field label="Message id">{l.messageId ? <span className="mono">{l.messageId}</span> : dash}</Field>
              {l.correlationId ? (
                <Field label="Correlation id">
                  <span className="mono">{l.correlationId}</span>
                </Field>
              ) : null}
              <Field label={digestLabel(l.sha256).label}>
                <span className="mono">{l.sha256}</span>
              </Field>
            </tbody>
          </table>
        </section>
      </div>
      {f.stackTrace ? (
        <section className="card section">
          <h2>Stack trace</h2>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container; tabIndex lets keyboard users focus and scroll a long trace */}
          <pre className="block stack" tabIndex={0}>
            {f.stackTrace}
          </pre>
        </section>
      ) : null}
      <DeathHistory history={l.history} countLabel={labels.count} queueLabel={labels.queue} />
      <PayloadPanel
        view={l.payload}
        masked={l.masking.payloadMasked}
        maskedDetail={{ payloadMaskedCount: l.masking.payloadMaskedCount, byRule: l.masking.byRule, canReveal }}
        sensitive={l.masking.sensitive}
        canDownload={false}
        size={l.bodySize}
        sha256={l.sha256}
        contentType={l.contentType}
        contentEncoding={l.contentEncoding}
        downloadHref=""
      />
      <LetterEntries letter={l} canReveal={canReveal} />
      {can(actor.role, "archive:restore") && l.restoreState !== "restored" ? (
        <section className="section">
          <h2>Undo</h2>
          {republishLimits.map((t) => (
            <p key={t} className="hint" data-testid="republish-limit">
              {t}
            </p>
          ))}
          <ArchiveTable rows={[summary]} raw={{}} canRestore canPayload={can(actor.role, "letter:read-payload")} />
        </section>
      ) : null}
    </main>
  );
}
