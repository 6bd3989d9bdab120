"use client";

import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useState, useTransition, type FormEvent } from "react";
import { previewGroupRepairAction, startGroupRepairAction } from "@/app/dlqs/[connectionId]/[queue]/repair/actions";
import { formatCount } from "@/lib/format";
import type { GroupRepairPreview } from "@/lib/redrive/repair-preview";
import { describeScope, letters, type UiSelection } from "@/lib/redrive/ui-format";
import { FixAndStages, useStageFields } from "@/components/redrive/stage-fields";
import { redriveJobHref } from "@/lib/redrive/ui-links";
import type { RedrivePreview } from "@/lib/redrive/use-cases";
import { GroupRepairPreviewView } from "./group-repair-preview";
import { readPatch, type PatchKind } from "./patch-text";

const EXAMPLES: Record<PatchKind, string> = {
  "json-patch":
    '[\n  { "op": "test", "path": "/status", "value": "PAYED" },\n  { "op": "replace", "path": "/status", "value": "PAID" }\n]',
  "merge-patch": '{ "status": "PAID" }',
};

/** The phrase the admin confirms: "Repair 5 letters". */
export const repairPhrase = (n: number) => `Repair ${letters(n)}`;

/**
 * The group repair form: the group's scope and count, the patch (JSON Patch or merge patch; a JSON
 * error is shown at its line and column and blocks the preview), the reason, the preview letter by
 * letter, then the stages as the redrive form has them and a confirmation naming the count the
 * preview counted. A preview answers for the patch it was made with: editing the patch afterwards
 * asks for a new one before anything can start.
 */
export function GroupRepairForm({
  connectionId,
  queue,
  selection,
  initial,
  groupLabel,
  origins,
  backHref,
}: {
  connectionId: string;
  queue: string;
  selection: UiSelection;
  initial: RedrivePreview;
  groupLabel: string | null;
  origins: string[];
  backHref: string;
}) {
  const router = useRouter();
  const [kind, setKind] = useState<PatchKind>("json-patch");
  const [text, setText] = useState("");
  const [reason, setReason] = useState("");
  const [preview, setPreview] = useState<{ key: string; data: GroupRepairPreview } | null>(null);
  const [confirmed, setConfirmed] = useState(false);
  const [error, setError] = useState<{ message: string; stale: boolean } | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const [pending, transition] = useTransition();

  const read = readPatch(kind, text);
  const key = JSON.stringify([kind, text]);
  const current = preview && preview.key === key ? preview.data : null;
  const count = current?.total ?? initial.count;
  const stages = useStageFields(count);
  const { fix, sample } = stages;

  const runPreview = () => {
    if (!read.ok) return;
    setError(null);
    setPreviewError(null);
    transition(async () => {
      const r = await previewGroupRepairAction({ connectionId, queue, selection, patch: read.patch, limit: 50 });
      if (!r.ok) return setPreviewError(r.error.message);
      setPreview({ key, data: r.data });
      setConfirmed(false);
    });
  };

  const problems: string[] = [];
  if (!current) problems.push("Preview the patch first.");
  else if (current.applies === 0)
    problems.push("The patch applies to none of these letters: change it and preview again.");
  if (reason.trim().length < 3) problems.push("Give the reason for the repair (at least 3 characters).");
  problems.push(...stages.problems);
  const ready = current !== null && read.ok && count > 0 && problems.length === 0 && confirmed;
  const phrase = repairPhrase(count);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!ready || !sample || !read.ok) return;
    setError(null);
    transition(async () => {
      const r = await startGroupRepairAction({
        connectionId,
        queue,
        selection,
        target: { kind: "origin" },
        repair: { patch: read.patch, reason: reason.trim() },
        fix: fix.trim(),
        confirmedCount: count,
        sample,
        watchSeconds: stages.watchSeconds,
        rate: stages.rate,
      });
      if (!r.ok) {
        const stale = r.error.code === "conflict:count";
        setError({ message: r.error.message, stale });
        if (stale) setConfirmed(false);
        return;
      }
      router.push(redriveJobHref(connectionId, queue, r.data.id));
    });
  };

  return (
    <form className="redrive-form" onSubmit={submit} data-testid="group-repair-form" noValidate>
      <section className="card redrive-scope" aria-label="Scope">
        <div className="hint">You are about to repair and redrive</div>
        <p className="redrive-scope-text" data-testid="group-repair-scope" data-count={count}>
          <strong>{describeScope(selection, count, queue, groupLabel)}</strong>
        </p>
        <p className="hint">
          {current
            ? "Counted by the preview."
            : "Counted in the triage index when the page opened; the preview counts again."}{" "}
          <Link href={backHref}>← Back to triage</Link>
        </p>
        {initial.warnings.map((w) => (
          <div key={w} className="banner banner-warn" data-testid="group-repair-warning">
            {w}
          </div>
        ))}
        <p className="hint">
          Repaired copies go back to{" "}
          {origins.length ? (
            <span className="mono" data-testid="group-repair-origins">
              {origins.slice(0, 5).join(", ")}
            </span>
          ) : (
            "each letter's origin"
          )}
          {origins.length > 5 ? ` and ${origins.length - 5} more` : ""}, as new messages carrying
          x-dlq-repaired-by-operation and x-dlq-original-message-id.
        </p>
      </section>

      <fieldset className="card">
        <legend>Patch</legend>
        {/* biome-ignore lint/a11y/useSemanticElements: a toggle-button pair inside this fieldset already; role=group names the pair without a nested legend */}
        <div className="segmented" role="group" aria-label="Patch format">
          {(["json-patch", "merge-patch"] as const).map((k2) => (
            <button
              key={k2}
              type="button"
              className="btn btn-small"
              aria-pressed={kind === k2}
              aria-current={kind === k2 ? "true" : undefined}
              onClick={() => setKind(k2)}
              data-testid={`group-repair-kind-${k2}`}
            >
              {k2 === "json-patch" ? "JSON Patch (RFC 6902)" : "JSON Merge Patch (RFC 7396)"}
            </button>
          ))}
        </div>
        <label>
          <span className="hint block">
            {kind === "json-patch"
              ? 'An array of operations applied in order; a "test" operation leaves letters it does not match untouched.'
              : "An object merged into each payload; null removes a field."}{" "}
            For example: <code className="mono">{EXAMPLES[kind].replace(/\s+/g, " ")}</code>
          </span>
          <textarea
            value={text}
            onChange={(e) => setText(e.target.value)}
            rows={8}
            spellCheck={false}
            className="mono"
            aria-invalid={text.trim() !== "" && !read.ok}
            aria-describedby="group-repair-patch-error"
            placeholder={EXAMPLES[kind]}
            data-testid="group-repair-patch"
          />
        </label>
        {text.trim() !== "" && !read.ok ? (
          <p
            className="form-error"
            id="group-repair-patch-error"
            role="alert"
            data-testid="group-repair-patch-error"
            data-line={read.line ?? undefined}
            data-column={read.column ?? undefined}
          >
            {read.message}
          </p>
        ) : null}
        <label>
          <span className="hint block">
            Reason for the repair: recorded with every letter it changes and in the audit log.
          </span>
          <textarea
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            rows={2}
            maxLength={2000}
            placeholder="Payments wrote PAYED before 2.3.3 (INC-77)"
            data-testid="group-repair-reason"
          />
        </label>
        <div className="toolbar">
          <button
            type="button"
            className="btn"
            onClick={runPreview}
            disabled={pending || !read.ok}
            data-testid="group-repair-preview-button"
          >
            {pending && !current ? "Previewing…" : "Preview"}
          </button>
          {preview && !current ? (
            <span className="hint" data-testid="group-repair-preview-stale">
              The patch changed since the preview: preview again.
            </span>
          ) : null}
        </div>
        {previewError ? (
          <div className="form-error" role="alert" data-testid="group-repair-preview-error">
            {previewError}
          </div>
        ) : null}
      </fieldset>

      {current ? <GroupRepairPreviewView preview={current} /> : null}

      <FixAndStages
        s={stages}
        testIdPrefix="group-repair"
        stage1Verb="repairs and sends"
        stage2Verb="handles"
        placeholder="orders-service 2.3.3 accepts PAID (ORD-812)"
      />

      <section className="card redrive-confirm" aria-label="Confirm">
        {problems.length && (fix.length || reason.length || current) ? (
          <ul className="hint redrive-problems" data-testid="group-repair-problems">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        ) : null}
        <label className="radio">
          <input
            type="checkbox"
            checked={confirmed}
            onChange={(e) => setConfirmed(e.target.checked)}
            disabled={!current || count === 0}
            data-testid="group-repair-confirm"
          />
          <span>
            <strong>{phrase}</strong> from <span className="mono">{queue}</span>
            {current && current.doesNotApply > 0 ? (
              <> ({formatCount(current.doesNotApply)} the patch does not fit will stay there)</>
            ) : null}
            . I have checked the preview and the fix is deployed.
          </span>
        </label>
        <div className="toolbar">
          <button
            type="submit"
            className="btn btn-primary"
            disabled={!ready || pending}
            data-testid="group-repair-submit"
            title={ready ? undefined : (problems[0] ?? "Tick the confirmation first.")}
          >
            {pending && current ? "Starting…" : `${phrase}: start the sample`}
          </button>
          <Link href={backHref} className="btn btn-quiet">
            Cancel
          </Link>
          <span className="hint">The start is recorded in the audit log with the patch, the reason and the fix.</span>
        </div>
        {error ? (
          <div className="form-error" role="alert" data-testid="group-repair-error">
            {error.message}{" "}
            {error.stale ? (
              <button
                type="button"
                className="btn btn-small"
                onClick={runPreview}
                disabled={pending || !read.ok}
                data-testid="group-repair-replan"
              >
                Preview again
              </button>
            ) : null}
          </div>
        ) : null}
      </section>
    </form>
  );
}
