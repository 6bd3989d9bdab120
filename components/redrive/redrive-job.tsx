"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, useTransition } from "react";
import {
  cancelRedriveAction,
  pauseRedriveAction,
  resumeRedriveAction,
  startBulkAction,
} from "@/app/dlqs/[connectionId]/[queue]/redrive/actions";
import { EndedNote, fetchJobPage, JobErrors, JobFacts, JobHeader, JobProgress } from "@/components/jobs/operation-job";
import { RelativeTime } from "@/components/ui/relative-time";
import type { ActionResult } from "@/lib/errors";
import { formatCount } from "@/lib/format";
import type { getRedrive, RedriveView } from "@/lib/redrive/use-cases";
import {
  controlsFor,
  describeScope,
  displayState,
  EVIDENCE_WORDS,
  formatDuration,
  fractionOf,
  isActive,
  parkingWords,
  readNumbers,
  targetWords,
  timeline,
  verdictBadge,
  verdictWords,
  type Control,
  type UiSelection,
} from "@/lib/redrive/ui-format";
import { LedgerTable } from "./ledger-table";
import { redriveKeys } from "./query-keys";
import { jobEnded, leftWords, resultOf } from "@/lib/jobs/accounting";

type Data = Awaited<ReturnType<typeof getRedrive>>;

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Seconds until `iso`, ticking every second (for the watch countdown). */
function useCountdown(iso: string | null): number | null {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!iso) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [iso]);
  return iso ? Math.max(0, Math.ceil((Date.parse(iso) - now) / 1000)) : null;
}

function ControlButton({
  label,
  control,
  onClick,
  pending,
  testId,
  kind = "",
}: {
  label: string;
  control: Control;
  onClick: () => void;
  pending: boolean;
  testId: string;
  kind?: string;
}) {
  return (
    <button
      type="button"
      className={`btn ${kind}`}
      onClick={onClick}
      disabled={!control.enabled || pending}
      title={control.why ?? undefined}
      aria-describedby={control.why ? `${testId}-why` : undefined}
      data-testid={testId}
    >
      {label}
    </button>
  );
}

/** What the look at each target the sample went to found: the evidence behind the verdict. */
function SampleEvidenceList({ evidence }: { evidence: RedriveView["sampleEvidence"] }) {
  if (!evidence) return null;
  if (evidence.length === 0)
    return (
      <p className="hint" data-testid="verdict-evidence">
        No sample letter reached a target the console could look at.
      </p>
    );
  return (
    <ul className="redrive-evidence" aria-label="Evidence per target" data-testid="verdict-evidence">
      {evidence.map((e) => {
        const w = EVIDENCE_WORDS[e.state] ?? { words: e.state, badge: "" };
        return (
          <li key={e.target} data-testid="evidence-row" data-target={e.target} data-evidence={e.state}>
            <span className={`badge ${w.badge}`}>{w.words}</span> <span className="mono">{e.target}</span>: {e.text}
            {e.readers.names.length ? <span className="hint block">Readers: {e.readers.names.join(", ")}</span> : null}
          </li>
        );
      })}
    </ul>
  );
}

/**
 * A redrive's live view, polled every second while it is active: timeline, progress with numbers,
 * rate vs target, ETA, verdict, controls (with why a control is disabled), and the ledger.
 */
export function RedriveJob({
  initial,
  ledgerState,
  after,
  role,
  groupLabel,
}: {
  initial: Data;
  ledgerState: string | null;
  after: number | null;
  role: { control: boolean; override: boolean; name: string };
  groupLabel: string | null;
}) {
  const id = initial.redrive.id;
  const qc = useQueryClient();
  const query = useQuery({
    queryKey: redriveKeys.page(id, ledgerState, after),
    queryFn: () => fetchJobPage<Data>("redrive", id, ledgerState, after),
    initialData: initial,
    refetchInterval: (q) => {
      const s = q.state.data?.redrive.state ?? "";
      return s === "paused" ? 3000 : isActive(s) ? 1000 : false;
    },
    staleTime: 0,
  });
  const data = query.data;
  const r = data.redrive;
  const n = readNumbers(r.progress as Record<string, unknown>, r.plan.total);
  const fraction = fractionOf(n);
  const [error, setError] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const [continueReason, setContinueReason] = useState("");
  const [pending, start] = useTransition();
  const controls = controlsFor(r, role);
  const countdown = useCountdown(r.stage === "watching" && r.state === "running" ? n.watchUntil : null);
  const sampleSize = n.sampleSize ?? r.plan.sampleSize;
  const verdict = verdictWords(r.sampleVerdict, r.sampleReturned, sampleSize);
  const badge = verdictBadge(r.sampleVerdict, r.sampleReturned, sampleSize);
  const steps = timeline(r.stage, r.state);
  const active = isActive(r.state);
  const ended = jobEnded(r.state);
  const breakerPause = r.state === "paused" && r.stage !== "awaiting_bulk" && r.pauseReason;

  const act = (fn: () => Promise<ActionResult<RedriveView>>) => {
    setError(null);
    start(async () => {
      const res = await fn();
      if (!res.ok) setError(res.error.message);
      await qc.invalidateQueries({ queryKey: redriveKeys.job(id) });
    });
  };

  const stepNote = (key: string): string | null => {
    if (key === "sample") return `${formatCount(r.plan.sampleSize)} letters`;
    if (key === "watching")
      return countdown !== null ? `${formatDuration(countdown)} left` : formatDuration(r.plan.watchSeconds);
    if (key === "verdict") return badge?.words ?? null;
    if (key === "bulk")
      return `${formatCount(Math.max(0, r.plan.total - r.plan.sampleSize))} at ${formatCount(r.plan.rate)}/s`;
    return null;
  };

  return (
    <div className="redrive-job" data-testid="redrive-job" data-state={r.state} data-stage={r.stage}>
      <JobHeader
        kind="redrive"
        id={r.id}
        state={displayState(r.state, r.stage)}
        note={displayState(r.state, r.stage) === "awaiting_go_ahead" && badge ? `sample ${badge.words}` : null}
        result={resultOf(r.progress)}
        pauseRequested={r.pauseRequested}
        cancelRequested={r.cancelRequested}
        scope={describeScope(r.plan.selection as UiSelection, r.plan.total, r.queue, groupLabel)}
        scopeTestId="redrive-scope"
      />

      <ol className="redrive-timeline" aria-label="Stages" data-testid="redrive-timeline">
        {steps.map((s) => (
          <li
            key={s.key}
            data-step={s.key}
            data-step-state={s.state}
            aria-current={s.state === "current" ? "step" : undefined}
          >
            <span className="step-dot" aria-hidden="true" />
            <span className="step-label">{s.label}</span>
            <span className="step-note" data-testid={s.key === "watching" ? "watch-countdown" : undefined}>
              {stepNote(s.key)}
            </span>
          </li>
        ))}
      </ol>

      {breakerPause ? (
        <div
          className={`banner ${r.pauseReason?.startsWith("Paused by ") ? "banner-warn" : "banner-danger"} redrive-pause-reason`}
          role="alert"
          data-testid="redrive-pause-reason"
        >
          <strong>Paused:</strong> {r.pauseReason}{" "}
          {role.control
            ? "Resume when the cause is dealt with, or cancel; letters not yet moved stay in the DLQ."
            : null}
        </div>
      ) : null}
      {r.state === "failed" ? (
        <div className="banner banner-danger" role="alert">
          <strong>The redrive failed:</strong> {r.error ?? "no reason was recorded"}. Letters not yet moved are still in
          the DLQ; the ledger below shows each one.
        </div>
      ) : null}

      {verdict && badge ? (
        <section
          className={`card redrive-verdict ${r.sampleVerdict === "clean" ? "is-clean" : r.sampleVerdict === "returned" ? "is-dirty" : "is-inconclusive"}`}
          style={r.sampleVerdict === "inconclusive" ? { borderLeft: "4px solid var(--warn-border)" } : undefined}
          aria-label="Sample verdict"
          data-testid="redrive-verdict"
          data-verdict={r.sampleVerdict}
        >
          <div className="card-head">
            <h2>Sample verdict</h2>
            <span className={`badge ${badge.badge}`} data-testid="verdict-badge">
              {badge.words}
            </span>
          </div>
          <p data-testid="verdict-words">{verdict}</p>
          <SampleEvidenceList evidence={r.sampleEvidence} />
          {r.stage === "awaiting_bulk" && r.state === "paused" ? (
            <p className="hint" data-testid="redrive-waiting">
              {role.control
                ? "The redrive waits for your go-ahead: nothing moves until you start the rest or cancel."
                : "The redrive waits for an operator's go-ahead: nothing moves until one starts the rest or cancels."}
            </p>
          ) : null}
          {r.stage === "awaiting_bulk" ? (
            <div className="toolbar">
              <ControlButton
                label={`Start the rest: ${formatCount(n.pending)} letters at ${formatCount(r.plan.rate)}/s`}
                control={controls.bulk}
                onClick={() => act(() => startBulkAction({ jobId: r.id }))}
                pending={pending}
                testId="redrive-bulk"
                kind="btn-primary"
              />
              {controls.bulk.why ? (
                <span className="hint" id="redrive-bulk-why">
                  {controls.bulk.why}
                </span>
              ) : null}
            </div>
          ) : null}
          {controls.continueAnyway ? (
            <div className="redrive-override" data-testid="redrive-continue-anyway">
              <label>
                <span className="hint">
                  Why continue although nothing shows a reader took the sample? Recorded with your name and the evidence
                  above in the audit log.
                </span>
                <textarea
                  value={continueReason}
                  onChange={(e) => setContinueReason(e.target.value)}
                  rows={2}
                  maxLength={2000}
                  data-testid="continue-reason"
                />
              </label>
              <button
                type="button"
                className="btn"
                disabled={pending || continueReason.trim().length < 3}
                onClick={() => act(() => startBulkAction({ jobId: r.id, continueAnywayReason: continueReason.trim() }))}
                data-testid="redrive-continue-start"
              >
                Continue anyway
              </button>
            </div>
          ) : null}
          {controls.override ? (
            <div className="redrive-override" data-testid="redrive-override">
              {controls.override.enabled ? (
                <>
                  <label>
                    <span className="hint">Why start anyway? Recorded with your name in the audit log.</span>
                    <textarea
                      value={reason}
                      onChange={(e) => setReason(e.target.value)}
                      rows={2}
                      maxLength={2000}
                      data-testid="override-reason"
                    />
                  </label>
                  <button
                    type="button"
                    className="btn btn-danger"
                    disabled={pending || reason.trim().length < 3}
                    onClick={() => act(() => startBulkAction({ jobId: r.id, overrideReason: reason.trim() }))}
                    data-testid="redrive-override-start"
                  >
                    Start anyway
                  </button>
                </>
              ) : (
                <span className="hint">{controls.override.why}</span>
              )}
            </div>
          ) : null}
          {r.bulkOverrideReason ? (
            <p className="hint" data-testid="redrive-anyway-reason">
              {r.sampleVerdict === "returned" ? "Started anyway" : "Continued anyway"} by {r.bulkStartedBy}: “
              {r.bulkOverrideReason}”
            </p>
          ) : null}
        </section>
      ) : null}

      <JobProgress
        kind="redrive"
        state={r.state}
        settled={n.settled}
        total={n.total}
        fraction={fraction}
        rate={n.rate}
        targetRate={n.targetRate ?? r.plan.rate}
        eta={n.eta}
        numberPrefix="n"
        numbers={[
          ["redriven", "Redriven", n.redriven, ""],
          ["failed", "Failed", n.failed, n.failed ? "is-bad" : ""],
          ["missing", "Missing", n.missing, n.missing ? "is-warn" : ""],
          ["parked", "Parked", n.parked, n.parked ? "is-warn" : ""],
          ["returned", "Came back", n.returned, n.returned ? "is-bad" : ""],
          ["skipped", "Skipped", n.skipped, ""],
          ended
            ? [
                "pending",
                capitalize(leftWords("redrive", r.state)),
                (data.counts.pending ?? 0) + (data.counts.interrupted ?? 0) + (data.counts.moving ?? 0),
                "",
              ]
            : ["pending", "Waiting", n.pending, ""],
        ]}
      />

      <div className="toolbar redrive-controls" data-testid="redrive-controls">
        <ControlButton
          label="Pause"
          control={controls.pause}
          onClick={() => act(() => pauseRedriveAction({ jobId: r.id }))}
          pending={pending}
          testId="redrive-pause"
        />
        <ControlButton
          label="Resume"
          control={controls.resume}
          onClick={() => act(() => resumeRedriveAction({ jobId: r.id }))}
          pending={pending}
          testId="redrive-resume"
        />
        <ControlButton
          label="Cancel redrive"
          control={controls.cancel}
          onClick={() => act(() => cancelRedriveAction({ jobId: r.id }))}
          pending={pending}
          testId="redrive-cancel"
          kind="btn-danger"
        />
        <span className="hint" data-testid="controls-why">
          {!role.control
            ? controls.pause.why
            : active
              ? "Cancel leaves every letter not yet moved in the DLQ, untouched."
              : "This redrive has ended."}
          <EndedNote state={r.state} finishedAt={r.finishedAt} />
        </span>
      </div>
      <JobErrors kind="redrive" action={error} polling={query.error} />

      <JobFacts
        rows={[
          { label: "Fix it follows", value: r.plan.fix, testId: "redrive-fix" },
          ...(r.plan.repair
            ? [
                {
                  label: "Repair",
                  value: `Repairs each letter with a ${r.plan.repair.patch.kind === "json-patch" ? "JSON Patch" : "JSON merge patch"} (reason “${r.plan.repair.reason}”); a letter it does not fit stays in the DLQ, failed with the reason.`,
                  testId: "redrive-repair",
                },
              ]
            : []),
          {
            label: "Started by",
            testId: "redrive-by",
            value: (
              <>
                {r.createdBy ?? "—"} · <RelativeTime value={r.createdAt} />
                {r.bulkStartedBy ? <> · the rest started by {r.bulkStartedBy}</> : null}
              </>
            ),
          },
          { label: "Target", value: targetWords(r.plan.target, "each letter's origin (where it failed)") },
          {
            label: "Sample · watch · rate",
            value: `${formatCount(r.plan.sampleSize)} letters · ${formatDuration(r.plan.watchSeconds)} · ${formatCount(r.plan.rate)} letters/s`,
          },
          { label: "Park after", value: `${r.plan.redriveLimit} redrives (${parkingWords(r.plan.parking)})` },
          {
            label: "Breaker",
            value: `pauses when ${Math.round(r.plan.breakerThreshold * 100)} % of the last ${formatCount(r.plan.breakerWindow)} letters come back`,
          },
        ]}
      />

      <LedgerTable
        redrive={r}
        counts={data.counts}
        rows={data.ledger}
        nextAfter={data.nextAfter}
        state={ledgerState}
        after={after}
      />
    </div>
  );
}
