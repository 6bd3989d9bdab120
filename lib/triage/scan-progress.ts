/** Wording and numbers of a scan's progress, for the progress bar. Pure (client-safe). */
import { formatCount } from "@/lib/format";

export type ScanStateName = "queued" | "running" | "paused" | "cancelling" | "cancelled" | "succeeded" | "failed";

const ACTIVE: readonly string[] = ["queued", "running", "paused", "cancelling"];

export function isActiveScan(state: string | null | undefined): boolean {
  return !!state && ACTIVE.includes(state);
}

export interface ProgressNumbers {
  read?: number;
  total?: number | null;
  rate?: number;
  eta?: number | null;
  /** Set when the scan ended without reading every letter (StreamShortfall): nothing was marked gone. */
  partial?: { reason: string; unread: number | null } | null;
}

/** 0..1 when the total is known, null otherwise (the bar is then indeterminate). */
export function progressFraction(p: ProgressNumbers): number | null {
  if (!p.total || p.total <= 0) return null;
  return Math.min(1, Math.max(0, (p.read ?? 0) / p.total));
}

/** "1 h 5 min", "3 min 20 s", "45 s"; "—" when unknown. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h} h${m ? ` ${m} min` : ""}`;
}

/** "1,200 / 5,000 letters read · 340/s · about 11 s left" */
export function describeProgress(p: ProgressNumbers): string {
  const read = formatCount(p.read ?? 0);
  const parts = [p.total ? `${read} / ${formatCount(p.total)} letters read` : `${read} letters read`];
  if (p.rate && p.rate > 0) parts.push(`${p.rate >= 10 ? Math.round(p.rate) : p.rate.toFixed(1)}/s`);
  if (p.eta !== null && p.eta !== undefined && Number.isFinite(p.eta))
    parts.push(`about ${formatDuration(p.eta)} left`);
  return parts.join(" · ");
}

export const STATE_WORDS: Record<ScanStateName, string> = {
  queued: "Waiting to start",
  running: "Scanning",
  paused: "Paused",
  cancelling: "Stopping after this batch",
  cancelled: "Cancelled",
  succeeded: "Done",
  failed: "Failed",
};
