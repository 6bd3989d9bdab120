/**
 * Words and numbers for the redrive pages: scope, confirmation phrase, progress, timeline, which
 * controls apply and why not. Pure (client-safe): no server-only imports.
 */
import { jobEnded, leftWords } from "@/lib/jobs/accounting";
import { formatCount } from "@/lib/format";
import { parseTriageParams, type TriageView } from "@/lib/triage/view-params";

export type UiSelection =
  | { kind: "group"; groupKey: string }
  | { kind: "filter"; filter: Record<string, unknown> }
  | { kind: "letters"; letterIds: string[] };

type Search = Record<string, string | string[] | undefined>;

export const letters = (n: number) => `${formatCount(n)} ${n === 1 ? "letter" : "letters"}`;

/** The phrase the operator confirms: "Redrive 23 letters". */
export const confirmPhrase = (n: number) => `Redrive ${letters(n)}`;

/** The triage filter of a view as the redrive plan's filter (gone letters are never redriven). */
export function filterOfView(v: TriageView): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  if (v.group) f.groupKey = v.group;
  if (v.exceptionClass) f.exceptionClass = v.exceptionClass;
  if (v.reason) f.reason = v.reason;
  if (v.origin) f.origin = v.origin;
  if (v.from) f.from = v.from;
  if (v.to) f.to = v.to;
  if (v.header) f.header = v.header;
  if (v.q) f.text = v.q;
  return f;
}

/**
 * The selection a "new redrive" URL names: `id` (repeated) for hand-picked letters, else the
 * triage filters (`group` alone is a group). The same query string as the triage page's.
 */
export function selectionFromSearch(
  sp: Search,
): { ok: true; selection: UiSelection; view: TriageView } | { ok: false; message: string } {
  const ids = ([] as string[])
    .concat(sp.id ?? [])
    .map((s) => s.trim())
    .filter(Boolean);
  const parsed = parseTriageParams({ ...sp, id: undefined });
  if (!parsed.ok) return parsed;
  const view = parsed.value;
  if (ids.length) return { ok: true, selection: { kind: "letters", letterIds: [...new Set(ids)] }, view };
  const filter = filterOfView(view);
  const keys = Object.keys(filter);
  if (keys.length === 1 && keys[0] === "groupKey")
    return { ok: true, selection: { kind: "group", groupKey: view.group! }, view };
  return { ok: true, selection: { kind: "filter", filter }, view };
}

/** The query string of a "new redrive" link for a selection (the inverse of selectionFromSearch). */
export function newRedriveQuery(sel: { letterIds: string[] } | { view: Partial<TriageView> }): string {
  const q = new URLSearchParams();
  if ("letterIds" in sel) for (const id of sel.letterIds) q.append("id", id);
  else {
    const v = sel.view;
    if (v.group) q.set("group", v.group);
    if (v.exceptionClass) q.set("class", v.exceptionClass);
    if (v.reason) q.set("reason", v.reason);
    if (v.origin) q.set("origin", v.origin);
    if (v.from) q.set("from", v.from);
    if (v.to) q.set("to", v.to);
    if (v.header) q.set("header", `${v.header.name}:${v.header.value}`);
    if (v.q) q.set("q", v.q);
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

const FILTER_WORDS: Record<string, string> = {
  exceptionClass: "exception",
  reason: "reason",
  origin: "origin",
  from: "arrived from",
  to: "arrived until",
};

/** "23 letters of group java.net.SocketTimeoutException … in demo.orders.dlq". */
export function describeScope(sel: UiSelection, count: number, queue: string, groupLabel?: string | null): string {
  const n = letters(count);
  if (sel.kind === "group") return `${n} of group ${groupLabel ?? sel.groupKey} in ${queue}`;
  if (sel.kind === "letters") return `${n} chosen by hand in ${queue}`;
  let group = "";
  const where: string[] = [];
  for (const [k, v] of Object.entries(sel.filter)) {
    if (k === "groupKey") group = ` of group ${groupLabel ?? v}`;
    else if (k === "header") where.push(`header ${(v as { name: string }).name} = ${(v as { value: string }).value}`);
    else if (k === "text") where.push(`text contains “${v}”`);
    else where.push(`${FILTER_WORDS[k] ?? k} ${String(v)}`);
  }
  if (!group && !where.length) return `all ${n} in ${queue}`;
  return `${n}${group}${where.length ? ` where ${where.join(", ")}` : ""} in ${queue}`;
}

/** "5" → 5 letters, "10%" → 10 percent; null when not a valid sample size. */
export function parseSample(text: string): { count: number } | { percent: number } | null {
  const t = text.trim();
  const pct = /^(\d+(?:\.\d+)?)\s*%$/.exec(t);
  if (pct) {
    const p = Number(pct[1]);
    return p > 0 && p <= 100 ? { percent: p } : null;
  }
  if (!/^\d+$/.test(t)) return null;
  const n = Number(t);
  return n >= 1 && n <= 10_000 ? { count: n } : null;
}

/** Letters in the sample for `total` (mirrors the engine's sampleCount). */
export function sampleLetters(sample: { count: number } | { percent: number }, total: number): number {
  const k = "count" in sample ? sample.count : Math.ceil((total * sample.percent) / 100);
  return Math.max(1, Math.min(total, k));
}

/** "2 min", "45 s", "1 h 5 min"; "—" when unknown. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  const m = Math.round((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ""}`;
}

export interface Numbers {
  total: number;
  settled: number;
  redriven: number;
  failed: number;
  missing: number;
  parked: number;
  skipped: number;
  returned: number;
  pending: number;
  rate: number;
  targetRate: number | null;
  eta: number | null;
  sampleSize: number | null;
  sampleReturned: number | null;
  watchUntil: string | null;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** The job's progress object (free-form JSON) as numbers. */
export function readNumbers(p: Record<string, unknown>, total: number): Numbers {
  const s = (p.sample ?? {}) as Record<string, unknown>;
  const t = num(p.total) || total;
  return {
    total: t,
    settled: num(p.read),
    redriven: num(p.redriven),
    failed: num(p.failed),
    missing: num(p.missing),
    parked: num(p.parked),
    skipped: num(p.skipped),
    returned: num(p.returned),
    pending: p.pending === undefined ? t - num(p.read) : num(p.pending),
    rate: num(p.rate),
    targetRate: typeof p.targetRate === "number" ? p.targetRate : null,
    eta: typeof p.eta === "number" ? p.eta : null,
    sampleSize: typeof s.size === "number" ? s.size : null,
    sampleReturned: typeof s.returned === "number" ? s.returned : null,
    watchUntil: typeof s.watchUntil === "string" ? s.watchUntil : null,
  };
}

/** Settled share of the total, 0..1. */
export const fractionOf = (n: Numbers) => (n.total > 0 ? Math.min(1, n.settled / n.total) : 0);

export const ACTIVE = ["queued", "running", "paused", "awaiting_go_ahead", "cancelling"];
export const isActive = (state: string) => ACTIVE.includes(state);

export type StepState = "done" | "current" | "todo" | "skipped";
export interface Step {
  key: "sample" | "watching" | "verdict" | "bulk" | "done";
  label: string;
  state: StepState;
}

const ORDER = ["sample", "watching", "awaiting_bulk", "bulk", "done"] as const;

/** The five steps of the timeline, with where the job is. */
export function timeline(stage: string, state: string): Step[] {
  const at = Math.max(0, ORDER.indexOf(stage as (typeof ORDER)[number]));
  const ended = ["succeeded", "cancelled", "failed"].includes(state);
  const labels: Array<[Step["key"], string]> = [
    ["sample", "Sample"],
    ["watching", "Watching"],
    ["verdict", "Verdict"],
    ["bulk", "The rest"],
    ["done", state === "cancelled" ? "Cancelled" : state === "failed" ? "Failed" : "Done"],
  ];
  return labels.map(([key, label], i) => {
    let s: StepState = i < at ? "done" : i === at ? "current" : "todo";
    if (state === "succeeded") s = "done";
    else if (ended) s = i < at ? "done" : i === 4 ? "current" : "skipped";
    return { key, label, state: s };
  });
}

/** The sample's verdict in words, or null before there is one. The evidence per target is shown beside it. */
export function verdictWords(verdict: string | null, returned: number, size: number | null): string | null {
  if (!verdict) return null;
  if (verdict === "clean")
    return `Clean: a reader took the ${size ?? "sample"} sample letters and none of them came back.`;
  if (verdict === "returned") return `${returned} of ${size ?? "?"} came back: the fix may not be working.`;
  return `Inconclusive: none of the ${size ?? "sample"} sample letters came back, but nothing shows a reader took them, so their not coming back proves nothing yet.`;
}

/** The verdict's badge: words and tone. */
export function verdictBadge(
  verdict: string | null,
  returned: number,
  size: number | null,
): { words: string; badge: string } | null {
  if (!verdict) return null;
  if (verdict === "clean") return { words: "clean", badge: "badge-ok" };
  if (verdict === "returned") return { words: `${returned} of ${size ?? "?"} came back`, badge: "badge-danger" };
  return { words: "inconclusive", badge: "badge-warn" };
}

/** What the look at one target found, in a word or two (`SampleEvidence.state`). */
export const EVIDENCE_WORDS: Record<string, { words: string; badge: string }> = {
  taken: { words: "taken by a reader", badge: "badge-ok" },
  waiting: { words: "may still be waiting", badge: "badge-warn" },
  no_reader: { words: "nobody reads it", badge: "badge-warn" },
  unknown: { words: "cannot tell", badge: "badge-warn" },
};

/** The state a redrive reads as: paused after its sample is waiting for the operator's go-ahead, not stuck. */
export function displayState(state: string, stage: string): string {
  return state === "paused" && stage === "awaiting_bulk" ? "awaiting_go_ahead" : state;
}

export interface Control {
  enabled: boolean;
  /** Why not, in an operator's words (when disabled). */
  why: string | null;
}

export interface Controls {
  pause: Control;
  resume: Control;
  cancel: Control;
  bulk: Control;
  /** After a sample that returned letters: an admin starts the rest with a reason. */
  override: Control | null;
  /** After an inconclusive sample: anyone who may start the rest continues anyway, with a reason. */
  continueAnyway: Control | null;
}

const on: Control = { enabled: true, why: null };
const off = (why: string): Control => ({ enabled: false, why });

/** Which buttons apply, for a role that may control redrives or not. */
export function controlsFor(
  r: {
    state: string;
    stage: string;
    pauseRequested: boolean;
    cancelRequested: boolean;
    bulk: { ready: boolean; needsOverride: boolean; needsReason?: boolean };
  },
  role: { control: boolean; override: boolean; name: string },
): Controls {
  if (!role.control) {
    const why = `Your role (${role.name}) can watch redrives but not control them.`;
    return {
      pause: off(why),
      resume: off(why),
      cancel: off(why),
      bulk: off(why),
      override: null,
      continueAnyway: null,
    };
  }
  const ended = !isActive(r.state);
  const endedWhy = `This redrive is ${r.state}.`;
  const pause = ended
    ? off(endedWhy)
    : r.state === "paused"
      ? off("Already paused.")
      : r.cancelRequested
        ? off("Cancelling.")
        : r.pauseRequested
          ? off("Pausing at the next batch.")
          : on;
  const resume = ended
    ? off(endedWhy)
    : r.stage === "awaiting_bulk"
      ? off("The sample is done: start the rest instead.")
      : r.state !== "paused" && !r.pauseRequested
        ? off("Running: nothing to resume.")
        : on;
  const cancel = ended ? off(endedWhy) : r.cancelRequested ? off("Cancelling.") : on;
  const bulk = r.bulk.ready
    ? r.bulk.needsOverride
      ? off("Sample letters came back: only an admin can start the rest, with a reason.")
      : r.bulk.needsReason
        ? off("The sample was inconclusive: check who reads the target, or continue anyway with a reason.")
        : on
    : r.stage === "bulk" || r.stage === "done"
      ? off("The rest has been started.")
      : ended
        ? off(endedWhy)
        : off("Wait for the sample's verdict.");
  const override =
    r.bulk.ready && r.bulk.needsOverride
      ? role.override
        ? on
        : off("Only an admin can start the rest after sample letters came back.")
      : null;
  const continueAnyway = r.bulk.ready && !r.bulk.needsOverride && r.bulk.needsReason ? on : null;
  return { pause, resume, cancel, bulk, override, continueAnyway };
}

export const STATE_WORDS: Record<string, string> = {
  queued: "Queued",
  running: "Running",
  paused: "Paused",
  awaiting_go_ahead: "Awaiting go-ahead",
  cancelling: "Cancelling",
  cancelled: "Cancelled",
  succeeded: "Done",
  failed: "Failed",
};

export const STATE_BADGE: Record<string, string> = {
  queued: "badge-info",
  running: "badge-info",
  paused: "badge-warn",
  awaiting_go_ahead: "badge-info",
  cancelling: "badge-warn",
  cancelled: "",
  succeeded: "badge-ok",
  failed: "badge-danger",
};

export const LEDGER_WORDS: Record<string, string> = {
  pending: "waiting",
  moving: "moving",
  interrupted: "interrupted, asked again on resume",
  unconfirmed: "gone after an interrupted attempt, being confirmed",
  moved: "redriven",
  failed: "failed (still in the DLQ)",
  missing: "not found in the DLQ",
  checksum_mismatch: "changed since indexed (still in the DLQ)",
  parked: "parked",
  skipped: "skipped",
  returned: "came back",
};

/** A ledger row's state in words; once the job has ended, a letter it never moved is not "waiting": it is still in the DLQ. */
export function ledgerWords(state: string, jobState: string): string {
  if (jobEnded(jobState) && (state === "pending" || state === "interrupted" || state === "moving"))
    return leftWords("redrive", jobState);
  return LEDGER_WORDS[state] ?? state;
}

/** Where a redrive sends letters, in words; `origin` says what it means on this broker. */
export function targetWords(target: unknown, originMeaning: string): string {
  const t = (target ?? {}) as { kind?: string; name?: string };
  return t.kind === "queue" && t.name ? t.name : originMeaning;
}

/** Parking choice in words. */
export function parkingWords(parking: unknown): string {
  const p = (parking ?? {}) as { kind?: string; name?: string };
  return p.kind === "queue" && p.name ? `moved to ${p.name}` : "left in the DLQ and marked";
}
