/**
 * A DLQ's operations figures as the UI states them: the words, how urgent, and where each figure
 * comes from and how old it is. Pure (no server-only): used by server pages and client leaves.
 */
import { formatRelative, formatSpan, formatUtc } from "@/lib/format";
import type { DlqOverviewRow } from "./queries";

type Figures = Pick<
  DlqOverviewRow,
  | "depth"
  | "sampledAt"
  | "oldestAt"
  | "oldestSource"
  | "oldestAsOf"
  | "retentionMs"
  | "deadlineAt"
  | "error"
  | "missingSince"
>;

/**
 * past: the deadline has passed (letters may already be gone); urgent: under the warning
 * threshold; ok: later; none: no retention (kept until removed); unknown: a retention but no age;
 * empty: nothing to lose; unsampled: no round has seen the DLQ yet.
 */
export type LostTone = "past" | "urgent" | "ok" | "none" | "unknown" | "empty" | "unsampled";

export interface Figure {
  text: string;
  /** Where the figure comes from and how old it is, for a title or small text. */
  title: string;
}

export interface LostIn extends Figure {
  tone: LostTone;
}

/** "sampled 20 s ago" (with the round's UTC time in words for the title). */
export function sampledWords(sampledAt: string, now: number): string {
  return `sampled ${formatRelative(sampledAt, now)}`;
}

/** Where the oldest letter's time comes from: "from the broker, sampled 20 s ago" or "as of the scan 12 min ago". */
export function oldestSourceWords(r: Pick<Figures, "oldestSource" | "oldestAsOf" | "sampledAt">, now: number): string {
  if (r.oldestSource === "scan") return `as of the scan ${formatRelative(r.oldestAsOf, now)}`;
  if (r.oldestSource === "broker") return `from the broker, ${sampledWords(r.sampledAt, now)}`;
  return sampledWords(r.sampledAt, now);
}

const staleWords = (r: Pick<Figures, "error" | "sampledAt" | "missingSince">, now: number) =>
  r.missingSince
    ? ` The DLQ has not been seen on its broker since ${formatUtc(r.missingSince)}.`
    : r.error
      ? ` The last round could not reach the broker: these figures are from ${formatRelative(r.sampledAt, now)}.`
      : "";

/** The time until the oldest letter is lost to the DLQ's retention, in the operator's words. */
export function lostIn(r: Figures | null, warnHours: number, now: number): LostIn {
  if (!r) return { text: "—", tone: "unsampled", title: "Not sampled yet: the sampler has not reached this DLQ." };
  const stale = staleWords(r, now);
  if (r.missingSince) return { text: "—", tone: "empty", title: `Gone:${stale}` };
  if (r.depth === 0)
    return { text: "—", tone: "empty", title: `Empty: nothing to lose (${sampledWords(r.sampledAt, now)}).${stale}` };
  if (r.retentionMs === null) {
    return {
      text: "kept until removed",
      tone: "none",
      title: `The DLQ has no retention limit the sampler can see: letters stay until someone removes them (${sampledWords(r.sampledAt, now)}).${stale}`,
    };
  }
  const retention = formatSpan(r.retentionMs);
  if (!r.deadlineAt || !r.oldestAt) {
    return {
      text: "unknown — scan to see",
      tone: "unknown",
      title: `The DLQ keeps letters for ${retention}, but the oldest letter's age is not known: a triage scan reads it (${sampledWords(r.sampledAt, now)}).${stale}`,
    };
  }
  const left = new Date(r.deadlineAt).getTime() - now;
  const basis = `Retention ${retention} from the oldest letter, ${oldestSourceWords(r, now)}; lost at ${formatUtc(r.deadlineAt)}.${stale}`;
  if (left <= 0)
    return {
      text: "past due",
      tone: "past",
      title: `The oldest letter's retention has run out: it may already be lost. ${basis}`,
    };
  return { text: `lost in ${formatSpan(left)}`, tone: left < warnHours * 3600_000 ? "urgent" : "ok", title: basis };
}

/** The age of the oldest letter and where it comes from. */
export function oldestAge(r: Figures | null, now: number): Figure {
  if (!r) return { text: "—", title: "Not sampled yet." };
  const stale = staleWords(r, now);
  if (r.depth === 0) return { text: "—", title: `Empty (${sampledWords(r.sampledAt, now)}).${stale}` };
  if (!r.oldestAt)
    return {
      text: "unknown",
      title: `The broker does not tell the oldest letter's age and no scan has seen it: a triage scan reads it (${sampledWords(r.sampledAt, now)}).${stale}`,
    };
  return {
    text: formatSpan(now - new Date(r.oldestAt).getTime()),
    title: `Oldest letter from ${formatUtc(r.oldestAt)}, ${oldestSourceWords(r, now)}.${stale}`,
  };
}

/** CSS class of a "lost in" figure. */
export function lostClass(tone: LostTone): string {
  return tone === "past" || tone === "urgent" ? "lost lost-urgent" : tone === "unknown" ? "lost lost-unknown" : "lost";
}

export const SEVERITY_BADGE: Record<string, string> = {
  critical: "badge badge-danger",
  warning: "badge badge-warn",
  info: "badge badge-info",
};
