/**
 * A sample's verdict and the evidence behind it (DESIGN.md, "What the console claims"): a sample is
 * clean only when a reader took its copies and none came back. Pure and client-safe: the engine
 * (handler.ts), the use cases, the API and the job page all word the verdict from here.
 */
import type { SampleEvidence, TargetReaders, WatchMark } from "@/lib/brokers/target-readers";

export type SampleVerdict = "clean" | "returned" | "inconclusive";
export const SAMPLE_VERDICTS: readonly SampleVerdict[] = ["clean", "returned", "inconclusive"];

/** A target the sample's copies went to, with where it stood right after they were confirmed there. */
export interface TargetMark {
  target: string;
  /** Null when no mark could be taken (the broker cannot look, or the look failed: `error` says why). */
  mark: WatchMark | null;
  error: string | null;
}

/** What `redrive_plans.sample_watch` holds: the marks from the end of the sample, the evidence from the verdict. */
export interface SampleWatchRecord {
  marks: TargetMark[];
  evidence: SampleEvidence[] | null;
}

export function sampleWatchOf(v: unknown): SampleWatchRecord | null {
  const r = v as Partial<SampleWatchRecord> | null | undefined;
  if (!r || !Array.isArray(r.marks)) return null;
  return { marks: r.marks, evidence: Array.isArray(r.evidence) ? r.evidence : null };
}

/**
 * returned: some sample letters came back (whatever the evidence says); clean: none came back and
 * every target's evidence shows a reader took the copies; inconclusive otherwise (nobody reads a
 * target, the copies may still wait there, the broker cannot tell, or no copy reached a target).
 */
export function decideVerdict(returned: number, evidence: readonly SampleEvidence[]): SampleVerdict {
  if (returned > 0) return "returned";
  if (evidence.length === 0) return "inconclusive";
  return evidence.every((e) => e.state === "taken") ? "clean" : "inconclusive";
}

/** Evidence for a target the broker cannot look at (no `sampleWatch`) or whose look failed. */
export function unknownEvidence(target: string, why: string): SampleEvidence {
  const readers: TargetReaders = { target, count: null, names: [], summary: why };
  return { target, state: "unknown", text: why, readers };
}

/** "queue \"orders\": 5 copies acknowledged by 1 consumer" for each target, joined. */
export function evidenceLine(evidence: readonly SampleEvidence[]): string {
  return evidence.map((e) => e.text.replace(/[.\s]+$/, "")).join("; ");
}

const letters = (n: number) => `${n} sample letter${n === 1 ? "" : "s"}`;

/**
 * The verdict in the operator's words, with its evidence: the job's pause reason and the audit row's
 * text. `size` is the sample's size, `watchSeconds` the watch.
 */
export function verdictSentence(v: {
  verdict: SampleVerdict;
  returned: number;
  size: number;
  watchSeconds: number;
  evidence: readonly SampleEvidence[];
}): string {
  const seen = evidenceLine(v.evidence);
  if (v.verdict === "returned")
    return `Sample returned ${v.returned} of ${v.size} letters within ${v.watchSeconds} s: the fix may not be working. Starting the rest now needs an admin and a reason.`;
  if (v.verdict === "clean")
    return `Sample done: clean. None of the ${letters(v.size)} came back within ${v.watchSeconds} s, and a reader took them (${seen}). Start the rest when ready.`;
  const why = seen || "no sample letter reached a target the console could look at";
  return `Sample inconclusive: none of the ${letters(v.size)} came back within ${v.watchSeconds} s, but nothing shows a reader took them (${why}). Start the rest only after checking the target's consumers, or continue anyway with a reason.`;
}

/** The form's warning for a target nobody reads (null when someone does, or the broker cannot tell). */
export function nobodyReadsWarning(r: TargetReaders, queueWord: string): string | null {
  if (r.count !== 0) return null;
  return `Nobody consumes ${queueWord} ${r.target}: a sample sent there cannot come back, so its verdict will be inconclusive.`;
}
