import { formatRelative, formatUtc } from "@/lib/format";
import { globMatch } from "@/lib/glob";
import { formatMinutes, severityRank, type DlqCondition } from "./rules";

/**
 * Which DLQs a rule applies to, and what it says about one of them. Pure: the evaluator
 * (./evaluate.ts) loads the rows once per round and hands them in.
 */
export interface RuleScope {
  connectionId: string | null;
  queuePattern: string | null;
  ownerTeam: string | null;
}

/** A rule applies to a DLQ matching every scope field it sets (none set: every DLQ). */
export function ruleApplies(
  scope: RuleScope,
  dlq: { connectionId: string; queue: string },
  owner: { team: string } | null,
): boolean {
  if (scope.connectionId !== null && scope.connectionId !== dlq.connectionId) return false;
  if (scope.queuePattern !== null && !globMatch(scope.queuePattern, dlq.queue)) return false;
  if (scope.ownerTeam !== null && (!owner || owner.team.trim().toLowerCase() !== scope.ownerTeam.trim().toLowerCase()))
    return false;
  return true;
}

/** The sampler's latest row for a DLQ (dlq_status), as far as alerts read it. */
export interface DlqVitals {
  depth: number | null;
  oldestAt: Date | null;
  /** "broker" | "scan" */
  oldestSource: string | null;
  oldestAsOf: Date | null;
  deadlineAt: Date | null;
  error: string | null;
  missingSince: Date | null;
}

export interface OpenFinding {
  severity: string;
  code: string;
  object: string;
}

export interface JudgeContext {
  now: Date;
  /** Null when the DLQ has no status row (a queue known only from a finding). */
  vitals: DlqVitals | null;
  /** Letters that entered in the rule's window, from the 60 s samples (inflow rules only). */
  inflow: number;
  /** The DLQ's worst open finding, if any. */
  finding: OpenFinding | null;
}

/**
 * firing / clear with the value in words, or unknown: the sampler could not read the DLQ this
 * round, or the figure is missing. An unknown verdict keeps the rule's state as it is, so a broker
 * outage neither fires nor resolves anything.
 */
export type Verdict = { state: "firing"; value: string } | { state: "clear"; value: string } | { state: "unknown" };

function scanNote(v: DlqVitals, now: Date): string {
  return v.oldestSource === "scan"
    ? `, as of the scan ${v.oldestAsOf ? formatRelative(v.oldestAsOf, now) : "(time unknown)"}`
    : "";
}

function plural(n: number, one: string, many: string) {
  return `${n} ${n === 1 ? one : many}`;
}

export function judge(c: DlqCondition, ctx: JudgeContext): Verdict {
  const { now, vitals: v } = ctx;
  if (c.kind === "finding_at_least") {
    const f = ctx.finding;
    if (f && severityRank(f.severity) >= severityRank(c.params.severity))
      return { state: "firing", value: `${f.severity} finding ${f.code} on ${f.object}` };
    return { state: "clear", value: `no open finding of severity ${c.params.severity} or worse` };
  }
  if (!v) return { state: "unknown" };
  if (v.missingSince) return { state: "clear", value: "the DLQ is gone from its broker" };
  if (v.error) return { state: "unknown" };
  switch (c.kind) {
    case "depth_above":
      if (v.depth === null) return { state: "unknown" };
      return { state: v.depth > c.params.depth ? "firing" : "clear", value: `depth ${v.depth}` };
    case "inflow_within": {
      const words = `${plural(ctx.inflow, "letter", "letters")} entered in the last ${formatMinutes(c.params.minutes)}`;
      return ctx.inflow > 0 ? { state: "firing", value: words } : { state: "clear", value: words };
    }
    case "oldest_above": {
      if (v.depth === 0) return { state: "clear", value: "the DLQ is empty" };
      if (!v.oldestAt) return { state: "unknown" };
      const ageMin = (now.getTime() - v.oldestAt.getTime()) / 60_000;
      const value = `oldest letter ${formatMinutes(ageMin)} old${scanNote(v, now)}`;
      return { state: ageMin > c.params.minutes ? "firing" : "clear", value };
    }
    case "deadline_within": {
      if (v.depth === 0) return { state: "clear", value: "the DLQ is empty" };
      if (!v.deadlineAt)
        return v.oldestAt
          ? { state: "clear", value: "the DLQ keeps its letters until they are removed" }
          : { state: "unknown" };
      const leftMin = (v.deadlineAt.getTime() - now.getTime()) / 60_000;
      const value =
        leftMin <= 0
          ? `letters are being lost to retention now (the oldest was due ${formatRelative(v.deadlineAt, now)})${scanNote(v, now)}`
          : `oldest letter lost to retention in ${formatMinutes(leftMin)} (at ${formatUtc(v.deadlineAt)})${scanNote(v, now)}`;
      return { state: leftMin <= c.params.minutes ? "firing" : "clear", value };
    }
  }
}
