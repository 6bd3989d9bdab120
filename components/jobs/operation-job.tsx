import type { ReactNode } from "react";
import { RelativeTime } from "@/components/ui/relative-time";
import { formatCount } from "@/lib/format";
import type { JobResult } from "@/lib/jobs/accounting";
import { formatDuration, isActive, STATE_BADGE, STATE_WORDS } from "@/lib/redrive/ui-format";

/**
 * The parts of an operation's live view that a discard and a redrive share. `kind` names the job
 * in the title and prefixes the test ids (`discard-state`, `redrive-settled`, …); the rest of each
 * kind's words come in as props.
 */
export type JobKind = "discard" | "redrive";

const TITLE: Record<JobKind, string> = { discard: "Discard", redrive: "Redrive" };

/** One page of a job's view from `/api/<kind>/<id>` (ledger filtered by `state`, from cursor `after`). Throws the server's words, or says the progress could not be read. */
export async function fetchJobPage<T>(
  kind: JobKind,
  id: string,
  state: string | null,
  after: number | null,
): Promise<T> {
  const q = new URLSearchParams({ limit: "50" });
  if (state) q.set("state", state);
  if (after) q.set("after", String(after));
  const res = await fetch(`/api/${kind}/${encodeURIComponent(id)}?${q}`, { cache: "no-store" });
  const body = (await res.json().catch(() => null)) as { ok: boolean; data?: T; error?: { message: string } } | null;
  if (!res.ok || !body?.ok || !body.data)
    throw new Error(body?.error?.message ?? `The ${kind}'s progress could not be read (HTTP ${res.status}). Retrying.`);
  return body.data;
}

/**
 * An ended job's state in words: "Done" only when every selected letter is accounted for; a job
 * that left letters behind says how many ("Done, 1 left"), whatever its ledger's state is called.
 */
export function endedWords(state: string, result: JobResult | null): { words: string; badge: string } {
  if (state === "succeeded" && result && !result.complete)
    return { words: `Done, ${formatCount(result.left)} left`, badge: "badge-warn" };
  return { words: STATE_WORDS[state] ?? state, badge: STATE_BADGE[state] ?? "" };
}

/** Title with the short id, state badge (with a pending pause or cancel), the scope in words, and how an ended job left its selection. */
export function JobHeader({
  kind,
  id,
  state,
  result = null,
  pauseRequested = false,
  cancelRequested,
  scope,
  scopeTestId,
  note = null,
}: {
  kind: JobKind;
  id: string;
  state: string;
  /** Said after the state in its badge (a redrive awaiting the go-ahead: its sample's verdict). */
  note?: string | null;
  /** `JobProgress.result` once the job ended (`resultOf`). */
  result?: JobResult | null;
  pauseRequested?: boolean;
  cancelRequested: boolean;
  scope: string;
  scopeTestId: string;
}) {
  const ended = endedWords(state, result);
  return (
    <div className="page-head">
      <h1>
        {TITLE[kind]} <span className="mono">{id.slice(0, 8)}</span>
      </h1>
      <span className={`badge ${ended.badge}`} data-testid={`${kind}-state`}>
        {ended.words}
        {note ? ` · ${note}` : ""}
        {pauseRequested && state === "running" ? " · pausing" : ""}
        {cancelRequested && isActive(state) ? " · cancelling" : ""}
      </span>
      <span className="meta" data-testid={scopeTestId}>
        {scope}
      </span>
      {result && !isActive(state) ? (
        <p className={result.complete ? "hint" : "banner-warn"} data-testid={`${kind}-result`}>
          {result.complete
            ? `Every selected letter is accounted for: ${result.summary}.`
            : `Not all done: ${result.summary}.`}
        </p>
      ) : null}
    </div>
  );
}

/** A count shown under the bar: test id `<prefix>-<key>`, its label, value, and a tone class (`is-bad`, `is-warn` or ""). */
export type JobNumber = readonly [key: string, label: string, value: number, tone: string];

/** Letters handled of the total, rate (against a target when there is one), ETA, the bar, and the counts. */
export function JobProgress({
  kind,
  state,
  settled,
  total,
  fraction,
  rate,
  targetRate,
  eta,
  numbers,
  numberPrefix,
}: {
  kind: JobKind;
  state: string;
  settled: number;
  total: number;
  /** Settled share, 0..1. */
  fraction: number;
  rate: number;
  targetRate?: number;
  /** Seconds left, when known. */
  eta: number | null;
  numbers: readonly JobNumber[];
  numberPrefix: string;
}) {
  const pct = Math.round(fraction * 1000) / 10;
  return (
    <section
      className="card redrive-progress"
      aria-label="Progress"
      data-testid={`${kind}-progress`}
      data-fraction={fraction}
    >
      <div className="scan-progress-head">
        <strong data-testid={`${kind}-settled`}>
          {formatCount(settled)} of {formatCount(total)} letters handled ({pct}%)
        </strong>
        <span className="spacer" />
        <span className="hint" data-testid={`${kind}-rate`}>
          rate {rate ? `${formatCount(rate)}/s` : "—"}
          {targetRate !== undefined ? ` of ${formatCount(targetRate)}/s target` : null}
        </span>
        {isActive(state) ? (
          <span className="hint" data-testid={`${kind}-eta`}>
            ETA {state === "running" && eta !== null ? formatDuration(eta) : "—"}
          </span>
        ) : null}
      </div>
      <div
        className="progress progress-lg"
        role="progressbar"
        aria-label={`${TITLE[kind]} progress`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(fraction * 100)}
        data-testid={`${kind}-bar`}
      >
        <div className="progress-fill" style={{ width: `${fraction * 100}%` }} />
      </div>
      <dl className="redrive-numbers" data-testid={`${kind}-numbers`}>
        {numbers.map(([key, label, value, tone]) => (
          <div key={key} className={tone} data-testid={`${numberPrefix}-${key}`} data-value={value}>
            <dt>{label}</dt>
            <dd>{formatCount(value)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/** " Ended 3 min ago." once the job has ended, for the end of the controls' hint. */
export function EndedNote({ state, finishedAt }: { state: string; finishedAt: string | null }) {
  if (isActive(state) || !finishedAt) return null;
  return (
    <>
      {" "}
      Ended <RelativeTime value={finishedAt} />.
    </>
  );
}

/** The last control action's error, then the polling's. */
export function JobErrors({ kind, action, polling }: { kind: JobKind; action: string | null; polling: Error | null }) {
  return (
    <>
      {action ? (
        <p className="form-error" role="alert" data-testid={`${kind}-action-error`}>
          {action}
        </p>
      ) : null}
      {polling ? <p className="form-error">{polling.message}</p> : null}
    </>
  );
}

/** The plan as label/value rows. */
export function JobFacts({ rows }: { rows: ReadonlyArray<{ label: string; value: ReactNode; testId?: string }> }) {
  return (
    <section className="card redrive-facts" aria-label="Plan">
      <table className="kv">
        <tbody>
          {rows.map((r) => (
            <tr key={r.label}>
              <th>{r.label}</th>
              <td data-testid={r.testId}>{r.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
