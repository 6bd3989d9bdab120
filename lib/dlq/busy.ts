/**
 * A DLQ another read holds: what a page says instead of a broker "unreachable". Where a read takes
 * the queue's letters without acking them (RabbitMQ), one console read runs at a time, and a page
 * behind a long one waits, then is refused with `unavailable:throttled` (details.busy READ_TURN_BUSY).
 * The broker answered; the queue is busy, and most often with a job of this console (a scan, the
 * indexer's rescan, a redrive): the page names it, from the jobs table, so the operator knows how long.
 */
import { jobStore } from "@/lib/jobs/store";
import type { JobKind } from "@/lib/jobs/types";
import { formatCount, formatWhen } from "@/lib/format";
import { AppError, asAppError } from "@/lib/errors";
import { READ_TURN_BUSY } from "@/lib/brokers/contract/errors";

/** A job of this console reading the DLQ: the jobs table's running and cancelling ones. */
export interface DlqReader {
  id: string;
  kind: JobKind | string;
  state: string;
  startedAt: Date | null;
  /** Queued by the indexer (params.indexer), not by an operator. */
  indexer: boolean;
  /** progress.read and progress.total where the job reports them. */
  read: number | null;
  total: number | null;
}

const KIND_WORDS: Record<string, string> = {
  scan: "a triage scan",
  redrive: "a redrive",
  discard: "a discard",
  "safe-move": "a safe move",
  "group-skip": "a group skip",
};

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);

/** The jobs of this console that may hold the DLQ's read right now (running or cancelling), newest first. */
export async function readersOf(connectionId: string, queue: string): Promise<DlqReader[]> {
  const jobs = await jobStore().list({ connectionId, queue, states: ["running", "cancelling"] }, 5);
  return jobs.map((j) => {
    const p = (j.progress ?? {}) as Record<string, unknown>;
    const params = (j.params ?? {}) as Record<string, unknown>;
    return {
      id: j.id,
      kind: j.kind,
      state: j.state,
      startedAt: j.startedAt,
      indexer: params.indexer === true,
      read: num(p.read),
      total: num(p.total),
    };
  });
}

/**
 * What the page says of a busy DLQ: the broker's refusal, and the console's own job reading it
 * when there is one. Counts, kinds and times only (nothing of a letter), for any role that may
 * open the DLQ.
 */
export function busyWords(
  queue: string,
  readers: readonly DlqReader[],
  now: Date | number = Date.now(),
  gaveUp = false,
): string {
  const why = gaveUp
    ? "and a triage scan holds the queue until it has read every letter, so this page did not wait for its turn"
    : "so this page waited for its turn and was refused";
  const wait = `Reads of this queue take turns (a read holds the letters it took until it ends), ${why}; nothing was read or changed.`;
  const r = readers[0];
  if (!r) {
    return `Queue "${queue}" is being read right now by another page, job or replica of the console (none of this console's jobs is reading it). ${wait} Try again in a moment.`;
  }
  // The indexer queues scans only: its rescan after inflow, not an operator's.
  const what = r.indexer ? "the indexer's triage scan" : (KIND_WORDS[r.kind] ?? `a ${r.kind} job`);
  const progress =
    r.read !== null && r.total !== null && r.total > 0
      ? `, ${formatCount(r.read)} of ${formatCount(r.total)} letters read`
      : r.read !== null
        ? `, ${formatCount(r.read)} letters read so far`
        : "";
  const since = r.startedAt ? `started ${formatWhen(r.startedAt, now)}` : "starting";
  const ending = r.state === "cancelling" ? " It is being cancelled and stops at its next batch." : "";
  const more = readers.length > 1 ? ` ${readers.length - 1} more of this console's jobs hold it too.` : "";
  return `Queue "${queue}" is being read by ${what} (${since}${progress}).${ending}${more} ${wait} Reload this page once it ends.`;
}

/**
 * How long a page's read waits for its turn before it asks whether a scan of this console holds the
 * queue: longer than a page read of an idle queue takes (28-146 ms for the demo's orders DLQ here,
 * its connection open), short enough that a page behind a scan says so at once. The question is one
 * indexed query (jobs by connection and queue), asked only by reads still waiting.
 */
export const TURN_CHECK_MS = 250;

/** A scan holds the queue's read until it has read every letter (the mover's jobs let a waiting read in between calls). */
const holdsToTheEnd = (r: DlqReader) => r.kind === "scan";

/**
 * A page's read of the DLQ (`read`, given the `turn` signal for BrowseOptions.turn) that does not
 * wait out its turn behind a triage scan: still waiting after TURN_CHECK_MS, it asks the jobs table,
 * and when a scan of this console is reading the queue (it holds it until its last letter, often
 * minutes) the read gives its turn up at once, and the page says which scan, how far it got, and
 * that it did not wait. Behind anything else (another page, the mover's calls, another console) it
 * waits its turn as before. Refusals are explained as rethrowBusy's.
 */
export async function readInTurn<T>(
  connectionId: string,
  queue: string,
  read: (turn: AbortSignal) => Promise<T>,
): Promise<T> {
  const turn = new AbortController();
  let settled = false;
  let gaveUpFor: DlqReader[] | null = null;
  const timer = setTimeout(() => {
    void readersOf(connectionId, queue)
      .catch(() => [])
      .then((readers) => {
        if (settled || !readers.some(holdsToTheEnd)) return;
        gaveUpFor = [...readers.filter(holdsToTheEnd), ...readers.filter((r) => !holdsToTheEnd(r))];
        turn.abort();
      });
  }, TURN_CHECK_MS);
  try {
    return await read(turn.signal);
  } catch (e) {
    throw await explainBusy(e, connectionId, queue, gaveUpFor);
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

/**
 * A read's rejection handler for a page of this DLQ: a read refused after waiting its turn behind
 * another console read (`details.busy`: READ_TURN_BUSY) is thrown as `unavailable:queue-busy`
 * naming this console's job reading the DLQ; anything else is thrown as it is.
 */
export function rethrowBusy(connectionId: string, queue: string): (e: unknown) => Promise<never> {
  return async (e) => {
    throw await explainBusy(e, connectionId, queue);
  };
}

async function explainBusy(
  e: unknown,
  connectionId: string,
  queue: string,
  gaveUpFor: DlqReader[] | null = null,
): Promise<unknown> {
  const err = asAppError(e);
  if (err?.code !== "unavailable:throttled" || err.details?.busy !== READ_TURN_BUSY) return e;
  const readers = gaveUpFor ?? (await readersOf(connectionId, queue).catch(() => []));
  return new AppError("unavailable:queue-busy", {
    cause: e,
    message: err.message,
    userMessage: busyWords(queue, readers, Date.now(), gaveUpFor !== null),
    details: { readers: readers.map((r) => ({ id: r.id, kind: r.kind })), waited: gaveUpFor === null },
  });
}
