/**
 * The lifecycle of a failure group ("failures as issues"), as pure functions: what the console
 * does on its own when a sync sees a group (systemTransition), and what an operator's change does
 * (operatorTransition). lib/triage/issue-sync.ts and lib/issues apply them to the database.
 *
 *   new ──ack──▶ acknowledged ──resolve──▶ resolved ──letter after the resolve──▶ regressed
 *   any ──ignore (forever | until a time | until N more letters)──▶ ignored ──ends──▶ regressed | acknowledged
 */
import { AppError } from "@/lib/errors";

export const ISSUE_STATES = ["new", "acknowledged", "resolved", "regressed", "ignored"] as const;
export type IssueState = (typeof ISSUE_STATES)[number];

/** The states an operator may set; new and regressed are the console's own findings. */
export const OPERATOR_STATES = ["acknowledged", "resolved", "ignored"] as const;
export type OperatorState = (typeof OPERATOR_STATES)[number];

export function isIssueState(v: unknown): v is IssueState {
  return typeof v === "string" && (ISSUE_STATES as readonly string[]).includes(v);
}

export type IgnoreRule =
  | { mode: "forever" }
  | { mode: "until_time"; until: Date }
  /** Ends when the issue's letter count reaches `untilCount` (its count when ignored plus `letters`). */
  | { mode: "until_count"; letters: number; untilCount: number };

/** What the lifecycle needs of an issue row. */
export interface IssueLife {
  state: IssueState;
  stateChangedAt: Date;
  resolvedAt: Date | null;
  resolveNote: string | null;
  ignore: IgnoreRule | null;
  /** Letters of the group ever indexed, each counted once. */
  letters: number;
  /** Latest arrival (dead-lettered time, else first indexed) of a letter of the group seen so far. */
  lastSeenAt: Date;
}

/** What one sync saw of a group. */
export interface GroupSeen {
  /** Latest arrival among the group's letters present now; null when none is present. */
  lastAt: Date | null;
  /** The issue's letter count after this sync (its count before plus letters indexed since). */
  letters: number;
}

export interface SystemChange {
  to: IssueState;
  /** Why, in an operator's words; kept in the history. */
  reason: string;
}

const iso = (d: Date) => d.toISOString();

/**
 * The console's own change of an issue when a sync sees its group, or null. `issue` null: the group
 * was never seen before. A letter counts as arriving after an instant only when its arrival is
 * later than that instant and than every letter seen before, so letters dead-lettered before a
 * resolve but read only after it (and a broker clock a little ahead) never regress a group.
 */
export function systemTransition(issue: IssueLife | null, seen: GroupSeen, now: Date): SystemChange | null {
  if (!issue) return { to: "new", reason: "first seen" };
  const newest = seen.lastAt && seen.lastAt > issue.lastSeenAt ? seen.lastAt : null;
  if (issue.state === "resolved") {
    const resolvedAt = issue.resolvedAt ?? issue.stateChangedAt;
    if (newest && newest > resolvedAt)
      return {
        to: "regressed",
        reason: `a letter dead-lettered at ${iso(newest)} arrived after the resolve at ${iso(resolvedAt)}`,
      };
    return null;
  }
  if (issue.state !== "ignored" || !issue.ignore) return null;
  const rule = issue.ignore;
  if (rule.mode === "until_count" && seen.letters >= rule.untilCount) {
    return {
      to: "regressed",
      reason: `ignore ended after ${rule.letters} more letter${rule.letters === 1 ? "" : "s"}`,
    };
  }
  if (rule.mode === "until_time" && now >= rule.until) {
    // Letters while it was ignored: it is failing again. None: it stays known, and quiet.
    const lastSeen = newest ?? issue.lastSeenAt;
    return lastSeen > issue.stateChangedAt
      ? { to: "regressed", reason: `ignore ended at ${iso(rule.until)}; letters arrived while it was ignored` }
      : { to: "acknowledged", reason: `ignore ended at ${iso(rule.until)}; no letter arrived while it was ignored` };
  }
  return null;
}

/** An operator's change, as the use cases take it (validated by their schemas first). */
export type OperatorChange =
  | { to: "acknowledged" }
  | { to: "resolved"; note?: string | null }
  | {
      to: "ignored";
      ignore: { mode: "forever" } | { mode: "until_time"; until: Date } | { mode: "until_count"; letters: number };
    };

/** The fields of an issue an operator's change sets. */
export interface IssuePatch {
  state: IssueState;
  stateChangedAt: Date;
  resolvedAt: Date | null;
  resolveNote: string | null;
  ignore: IgnoreRule | null;
}

export const MAX_IGNORE_LETTERS = 1_000_000;

/**
 * The issue after an operator's change, or null when it changes nothing (acknowledging an
 * acknowledged issue, resolving a resolved one with the same note, the same ignore again).
 * Resolving records the time (a letter arriving after it regresses the group); ignoring until N
 * more letters records the count at which the ignore ends.
 */
export function operatorTransition(issue: IssueLife, change: OperatorChange, now: Date): IssuePatch | null {
  const base = { state: change.to, stateChangedAt: now, resolvedAt: null, resolveNote: null, ignore: null };
  if (change.to === "acknowledged") return issue.state === "acknowledged" ? null : base;
  if (change.to === "resolved") {
    const note = change.note?.trim() ? change.note.trim() : null;
    if (issue.state === "resolved" && issue.resolveNote === note) return null;
    return { ...base, resolvedAt: now, resolveNote: note };
  }
  const rule = change.ignore;
  let ignore: IgnoreRule;
  if (rule.mode === "forever") ignore = { mode: "forever" };
  else if (rule.mode === "until_time") {
    if (!(rule.until instanceof Date) || Number.isNaN(rule.until.getTime()) || rule.until <= now)
      throw new AppError("bad_request:ignore", { userMessage: "Ignore until a time that is still to come." });
    ignore = { mode: "until_time", until: rule.until };
  } else {
    if (!Number.isInteger(rule.letters) || rule.letters < 1 || rule.letters > MAX_IGNORE_LETTERS)
      throw new AppError("bad_request:ignore", {
        userMessage: `Ignore until between 1 and ${MAX_IGNORE_LETTERS.toLocaleString("en")} more letters.`,
      });
    ignore = { mode: "until_count", letters: rule.letters, untilCount: issue.letters + rule.letters };
  }
  if (issue.state === "ignored" && sameIgnore(issue.ignore, ignore)) return null;
  return { ...base, ignore };
}

function sameIgnore(a: IgnoreRule | null, b: IgnoreRule): boolean {
  if (!a || a.mode !== b.mode) return false;
  if (a.mode === "until_time" && b.mode === "until_time") return a.until.getTime() === b.until.getTime();
  if (a.mode === "until_count" && b.mode === "until_count") return a.letters === b.letters;
  return true;
}

/** The ignore rule as stored (failure_issues.ignore_*), and back. */
export interface IgnoreColumns {
  ignoreMode: string | null;
  ignoreUntil: Date | null;
  ignoreUntilCount: number | null;
  ignoreLetters: number | null;
}

export function ignoreColumns(rule: IgnoreRule | null): IgnoreColumns {
  if (!rule) return { ignoreMode: null, ignoreUntil: null, ignoreUntilCount: null, ignoreLetters: null };
  if (rule.mode === "forever")
    return { ignoreMode: "forever", ignoreUntil: null, ignoreUntilCount: null, ignoreLetters: null };
  if (rule.mode === "until_time")
    return { ignoreMode: "until_time", ignoreUntil: rule.until, ignoreUntilCount: null, ignoreLetters: null };
  return {
    ignoreMode: "until_count",
    ignoreUntil: null,
    ignoreUntilCount: rule.untilCount,
    ignoreLetters: rule.letters,
  };
}

export function ignoreRuleOf(c: IgnoreColumns): IgnoreRule | null {
  if (c.ignoreMode === "forever") return { mode: "forever" };
  if (c.ignoreMode === "until_time" && c.ignoreUntil) return { mode: "until_time", until: new Date(c.ignoreUntil) };
  if (c.ignoreMode === "until_count" && c.ignoreUntilCount !== null)
    return { mode: "until_count", letters: c.ignoreLetters ?? 0, untilCount: c.ignoreUntilCount };
  return null;
}

/** List order: what needs a look first (new, regressed), then what is being handled, then what is settled. */
export const STATE_RANK: Record<IssueState, number> = {
  new: 0,
  regressed: 0,
  acknowledged: 1,
  ignored: 2,
  resolved: 2,
};

/** The lifecycle columns of a failure_issues row, as the sync and the use cases read them. */
export interface IssueLifeColumns {
  state: string;
  state_changed_at: Date;
  resolved_at: Date | null;
  resolve_note: string | null;
  ignore_mode: string | null;
  ignore_until: Date | null;
  ignore_until_count: number | null;
  ignore_letters: number | null;
  letters: number;
  last_seen_at: Date;
}

/** A row's lifecycle, for the transitions above (an unknown state reads as new). */
export function lifeOfRow(r: IssueLifeColumns): IssueLife {
  return {
    state: isIssueState(r.state) ? r.state : "new",
    stateChangedAt: new Date(r.state_changed_at),
    resolvedAt: r.resolved_at ? new Date(r.resolved_at) : null,
    resolveNote: r.resolve_note,
    ignore: ignoreRuleOf({
      ignoreMode: r.ignore_mode,
      ignoreUntil: r.ignore_until,
      ignoreUntilCount: r.ignore_until_count,
      ignoreLetters: r.ignore_letters,
    }),
    letters: Number(r.letters),
    lastSeenAt: new Date(r.last_seen_at),
  };
}
