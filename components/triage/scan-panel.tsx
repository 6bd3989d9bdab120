"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useEffect, useRef, useState, useTransition } from "react";
import { cancelScanAction, startScanAction } from "@/app/dlqs/[connectionId]/[queue]/triage/actions";
import { RelativeTime } from "@/components/ui/relative-time";
import type { ScanView } from "@/lib/triage/use-cases";
import {
  describeProgress,
  isActiveScan,
  progressFraction,
  STATE_WORDS,
  type ScanStateName,
} from "@/lib/triage/scan-progress";
import { triageKeys } from "./query-keys";

/** Scans started or seen running in this tab: they keep their bar after they end, even if the panel remounts. */
const watchedScans = new Set<string>();

async function fetchScan(id: string): Promise<ScanView> {
  const res = await fetch(`/api/triage/scans/${encodeURIComponent(id)}`, { cache: "no-store" });
  const body = (await res.json().catch(() => null)) as {
    ok: boolean;
    data?: ScanView;
    error?: { message: string };
  } | null;
  if (!res.ok || !body?.ok || !body.data)
    throw new Error(body?.error?.message ?? `The scan's progress could not be read (HTTP ${res.status}).`);
  return body.data;
}

/**
 * Starts a scan (operator+), shows its progress polled every second while it runs, cancels it.
 * A DLQ whose reading may cost letters asks for an explicit, audited confirmation first.
 * When a scan ends the page is refreshed so the groups and the letter list show the new index.
 */
export function ScanPanel({
  connectionId,
  queue,
  canScan,
  latest,
  lastCompleted,
}: {
  connectionId: string;
  queue: string;
  canScan: boolean;
  /** The newest scan of this DLQ, in any state. */
  latest: ScanView | null;
  lastCompleted: ScanView | null;
}) {
  const router = useRouter();
  const qc = useQueryClient();
  const [scanId, setScanId] = useState<string | null>(latest?.id ?? null);
  const [error, setError] = useState<string | null>(null);
  const [risk, setRisk] = useState<string | null>(null);
  const [pending, start] = useTransition();
  if (latest && isActiveScan(latest.state)) watchedScans.add(latest.id);

  const scanQuery = useQuery({
    queryKey: triageKeys.scan(scanId ?? "none"),
    queryFn: () => fetchScan(scanId!),
    enabled: !!scanId,
    initialData: scanId && latest && latest.id === scanId ? latest : undefined,
    refetchInterval: (q) => (isActiveScan(q.state.data?.state) ? 1000 : false),
    staleTime: 0,
  });
  const scan = scanQuery.data ?? null;
  const active = isActiveScan(scan?.state);

  // Refresh the server-rendered groups once when a scan we watched finishes.
  const wasActive = useRef(active);
  useEffect(() => {
    if (wasActive.current && !active) router.refresh();
    wasActive.current = active;
  }, [active, router]);

  const startScan = (acceptRisk: boolean) => {
    setError(null);
    start(async () => {
      const r = await startScanAction({ connectionId, queue, acceptRisk });
      if (!r.ok) {
        if (r.error.code.startsWith("confirmation_required")) setRisk(r.error.message);
        else setError(r.error.message);
        return;
      }
      setRisk(null);
      watchedScans.add(r.data.scan.id);
      qc.setQueryData(triageKeys.scan(r.data.scan.id), r.data.scan);
      setScanId(r.data.scan.id);
    });
  };
  const cancel = () => {
    if (!scan) return;
    setError(null);
    start(async () => {
      const r = await cancelScanAction({ jobId: scan.id });
      if (!r.ok) setError(r.error.message);
      else qc.setQueryData(triageKeys.scan(r.data.id), r.data);
    });
  };

  const fraction = scan ? progressFraction(scan.progress) : null;
  const indeterminate = fraction === null && active;
  const state = (scan?.state ?? null) as ScanStateName | null;
  return (
    <section className="scan-panel" aria-label="Scan" data-testid="scan-panel">
      <div className="scan-row">
        <button
          type="button"
          className="btn btn-primary"
          onClick={() => startScan(false)}
          disabled={!canScan || pending || active}
          title={
            canScan
              ? "Read every letter of this DLQ into the triage index"
              : "Scanning needs the operator or admin role"
          }
          data-testid="scan-start"
        >
          {active ? "Scanning…" : lastCompleted ? "Rescan" : "Scan"}
        </button>
        {active ? (
          <button
            type="button"
            className="btn"
            onClick={cancel}
            disabled={!canScan || pending || scan?.state === "cancelling"}
            data-testid="scan-cancel"
          >
            Cancel scan
          </button>
        ) : null}
        <span className="hint" data-testid="index-age">
          {lastCompleted ? (
            <>
              Index as of <RelativeTime value={lastCompleted.finishedAt} />
            </>
          ) : (
            "Not scanned yet: the groups and filters below need a scan first."
          )}
        </span>
        {!canScan ? (
          <span className="hint" data-testid="scan-not-allowed">
            · Your role (viewer) can look at the index but not start a scan.
          </span>
        ) : null}
      </div>
      {scan && (active || watchedScans.has(scan.id) || scan.state === "failed" || scan.state === "cancelled") ? (
        <div className="scan-progress" data-testid="scan-progress" data-state={scan.state}>
          <div className="scan-progress-head">
            <strong data-testid="scan-state">{state ? STATE_WORDS[state] : scan.state}</strong>
            <span className="muted" data-testid="scan-numbers">
              {describeProgress(scan.progress)}
            </span>
            <span className="spacer" />
            <span className="hint">
              started <RelativeTime value={scan.startedAt ?? scan.createdAt} />
            </span>
          </div>
          <div
            className={`progress${indeterminate ? " progress-indeterminate" : ""}`}
            role="progressbar"
            aria-label="Scan progress"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={fraction === null ? undefined : Math.round(fraction * 100)}
          >
            {/* While indeterminate the stylesheet sets the width (a sliding 30%). */}
            <div
              className="progress-fill"
              style={
                indeterminate
                  ? undefined
                  : { width: `${Math.round((fraction ?? (scan.state === "succeeded" ? 1 : 0)) * 100)}%` }
              }
            />
          </div>
          {scan.state === "succeeded" && scan.progress.partial ? (
            <p className="banner banner-warn" role="status" data-testid="scan-partial" style={{ marginTop: 6 }}>
              <strong>Not every letter was read.</strong> {scan.progress.partial.reason} The index keeps the letters it
              had; none was marked gone by this scan.
            </p>
          ) : null}
          {scan.state === "failed" ? (
            <p className="form-error" style={{ marginTop: 6 }}>
              The scan failed: {scan.error ?? "no reason was recorded"}. Start it again; it resumes from where it
              stopped.
            </p>
          ) : null}
        </div>
      ) : null}
      {scanQuery.error ? <p className="form-error">{(scanQuery.error as Error).message}</p> : null}
      {risk ? (
        <div className="banner banner-warn" role="alert" data-testid="scan-risk">
          <p>
            <strong>Scanning this DLQ can lose letters.</strong> {risk}
          </p>
          <button
            type="button"
            className="btn btn-danger"
            onClick={() => startScan(true)}
            disabled={pending}
            data-testid="scan-confirm-risk"
          >
            I accept the risk: scan this DLQ
          </button>{" "}
          <button type="button" className="btn btn-quiet" onClick={() => setRisk(null)}>
            Not now
          </button>{" "}
          <span className="hint">Your confirmation is recorded in the audit log.</span>
        </div>
      ) : null}
      {error ? (
        <p className="form-error" role="alert" data-testid="scan-error">
          {error}
        </p>
      ) : null}
    </section>
  );
}
