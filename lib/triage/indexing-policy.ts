import type { IndexingConfig } from "@/lib/config";
import { formatCount } from "@/lib/format";
import { globMatch } from "@/lib/glob";

/**
 * The rules of the triage indexer that need no broker and no database: whether the config switches
 * a DLQ off, whether a whole-DLQ rescan may run now, and what the DLQ's page says about it.
 */

export function indexingOff(cfg: IndexingConfig, connectionId: string, queue: string): boolean {
  return (
    !cfg.enabled || cfg.disabled.some((d) => globMatch(d.connection, connectionId) && globMatch(d.dlqPattern, queue))
  );
}

/** The indexer's record of a DLQ, as far as these rules need it (triage_index_state). */
export interface IndexStateView {
  mode: string;
  outcome: string;
  detail: string | null;
  roundAt: Date;
  indexedAt: Date | null;
  rescanAt: Date | null;
}

export type RescanVerdict =
  | { go: true }
  /** Not now; ask again in a later round (the DLQ stays due). */
  | { go: false; retry: true; why: string }
  /** Not until the DLQ changes again. */
  | { go: false; retry: false; why: string };

/**
 * A DLQ that can only be read whole is rescanned no more often than `intervalSeconds`, and only
 * while the connection's rescans of the last minute leave room for its depth in
 * `lettersPerMinutePerConnection`; a DLQ deeper than the whole budget is not rescanned on its own.
 */
export function rescanVerdict(
  cfg: IndexingConfig,
  input: { depth: number | null; lastRescanAt: Date | null; usedLastMinute: number; now: Date },
): RescanVerdict {
  if (input.lastRescanAt && input.now.getTime() - input.lastRescanAt.getTime() < cfg.intervalSeconds * 1000)
    return { go: false, retry: true, why: "rescanned less than the interval ago" };
  const depth = input.depth ?? 0;
  if (depth > cfg.lettersPerMinutePerConnection)
    return {
      go: false,
      retry: false,
      why: `${formatCount(depth)} letters is more than the ${formatCount(cfg.lettersPerMinutePerConnection)} letters a minute its connection's rescans may read`,
    };
  if (input.usedLastMinute + depth > cfg.lettersPerMinutePerConnection)
    return { go: false, retry: true, why: "its connection's rescans used the minute's budget" };
  return { go: true };
}

export type IndexingLineKind = "on" | "off" | "risk" | "pending" | "failed" | "over-budget";

export interface IndexingLine {
  kind: IndexingLineKind;
  /** Words before the time (when there is one). */
  text: string;
  /** ISO time the words refer to ("last at …"), or null. */
  at: string | null;
}

/**
 * The one line a DLQ's page shows about indexing on its own, from the config, the DLQ's read risk
 * and the indexer's record: truthful about what the last round did.
 */
export function indexingLineOf(input: {
  cfg: IndexingConfig;
  connectionId: string;
  queue: string;
  /** The broker's description says reading costs letters. Null: not known (the broker did not answer). */
  readRisk: boolean | null;
  state: IndexStateView | null;
}): IndexingLine {
  const { cfg, state } = input;
  if (indexingOff(cfg, input.connectionId, input.queue))
    return { kind: "off", text: "Indexing off by config", at: null };
  if (input.readRisk === true || (input.readRisk === null && state?.outcome === "risk"))
    return { kind: "risk", text: "Not indexed on its own: reading it has a risk", at: null };
  if (!state) return { kind: "pending", text: "Indexed continuously, not yet indexed on its own", at: null };
  if (state.outcome === "failed")
    return {
      kind: "failed",
      text: `Indexed continuously, but the last round failed${state.detail ? `: ${state.detail}` : ""}; last round`,
      at: state.roundAt.toISOString(),
    };
  if (state.outcome === "over-budget")
    return {
      kind: "over-budget",
      text: `Not rescanned on its own: ${state.detail ?? "too deep for the budget"}${state.indexedAt ? "; last indexed" : ""}`,
      at: state.indexedAt?.toISOString() ?? null,
    };
  if (!state.indexedAt)
    return {
      kind: "pending",
      text:
        state.outcome === "queued" ? "Indexed continuously, first rescan queued" : "Indexed continuously, catching up",
      at: null,
    };
  return { kind: "on", text: "Indexed continuously, last indexed", at: state.indexedAt.toISOString() };
}
