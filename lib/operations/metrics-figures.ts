import "server-only";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { processState } from "@/lib/process-state";

type Db = Pick<PrismaClient, "$queryRawUnsafe">;

/**
 * What the counters and the job histogram of /api/metrics are made of, read from the database at
 * scrape time so that every replica reports the same figures. Each figure is a count over rows
 * that are never deleted, in states a row never leaves (see LETTER_OUTCOMES), so it only grows.
 */

/** Letters of one connection in one outcome, over every redrive or discard ledger. */
export interface LetterTotal {
  connectionId: string;
  outcome: LetterOutcome;
  operation: "redrive" | "discard";
  letters: number;
}

export type LetterOutcome = "redriven" | "parked" | "discarded" | "failed";

/**
 * Ledger states per outcome, chosen so each total is monotonic: a redrive row reaches "failed" or
 * "checksum_mismatch" only as its final state (lib/redrive/ledger.ts updates only rows still
 * pending, moving or interrupted, or missing/unconfirmed ones that turn out moved or parked),
 * "moved" may later become "returned" (the letter came back to the DLQ after its confirmed move),
 * so both count as redriven; a discard row is updated only while pending or removing.
 */
export const LETTER_OUTCOMES: Record<"redrive" | "discard", Partial<Record<LetterOutcome, readonly string[]>>> = {
  redrive: { redriven: ["moved", "returned"], parked: ["parked"], failed: ["failed", "checksum_mismatch"] },
  discard: { discarded: ["discarded"], failed: ["failed", "checksum_mismatch"] },
};

const OPERATIONS = [
  { operation: "redrive", kind: "redrive", table: "redrive_letters" },
  { operation: "discard", kind: "discard", table: "discard_letters" },
] as const;

type JobCounts = {
  connectionId: string;
  operation: "redrive" | "discard";
  counts: Partial<Record<LetterOutcome, number>>;
};

/**
 * Ledger totals of finished jobs, by job id. A finished job's ledger states no longer change: they
 * are written by the job's own run before it ends (later upkeep, the leftover checks, changes
 * flags and reasons only), so its counts are read once per process, and a scrape counts only the
 * letters of jobs still running or new. Every replica holds the same facts, so they report the
 * same totals. A job deleted from the database is dropped here at the next scrape; ledger rows
 * deleted by hand under a job that stays are not seen by a process that counted them already.
 */
const finishedCounts = processState("metrics.finished-ledger-counts", () => new Map<string, JobCounts>());

/** Up to this many jobs to count, they are looked up one by one through the index; more, and the ledger is read in one pass. */
const FEW = 200;

/**
 * Per connection and outcome. A scrape reads the redrive and discard jobs (one small row each,
 * never their letters), then counts letters only for the jobs it has not counted finished
 * before (those running, and those new since the last scrape), per job through the ledgers'
 * (job_id, state, seq) index. So after a process's first scrape (one pass over each ledger) its
 * cost follows the number of jobs, not of letters.
 */
export async function letterTotals(db: Db, memo: Map<string, JobCounts> = finishedCounts): Promise<LetterTotal[]> {
  const jobs = await db.$queryRawUnsafe<Array<{ id: string; connection_id: string; kind: string; finished: boolean }>>(
    `SELECT id::text AS id, connection_id, kind, (state IN ('succeeded', 'failed', 'cancelled')) AS finished
       FROM jobs WHERE kind IN (${OPERATIONS.map((o) => `'${o.kind}'`).join(", ")})`,
  );
  const present = new Set(jobs.map((j) => j.id));
  for (const id of memo.keys()) if (!present.has(id)) memo.delete(id);

  const perJob = new Map<string, JobCounts>();
  for (const op of OPERATIONS) {
    const uncounted = jobs.filter((j) => j.kind === op.kind && !memo.has(j.id));
    for (const j of uncounted) perJob.set(j.id, { connectionId: j.connection_id, operation: op.operation, counts: {} });
    const outcomes = Object.entries(LETTER_OUTCOMES[op.operation]) as Array<[LetterOutcome, readonly string[]]>;
    const states = outcomes.flatMap(([, st]) => st);
    const add = (rows: Array<{ job_id: string; state: string; n: bigint }>) => {
      for (const r of rows) {
        const c = perJob.get(r.job_id)?.counts;
        if (!c) continue; // counted before, or a job that appeared after the list was read
        const outcome = outcomes.find(([, st]) => st.includes(r.state))![0];
        c[outcome] = (c[outcome] ?? 0) + Number(r.n);
      }
    };
    if (uncounted.length > FEW) {
      // A process's first scrape: one pass over the ledger beats thousands of index lookups.
      add(
        await db.$queryRawUnsafe(
          `SELECT job_id::text AS job_id, state, count(*)::bigint AS n FROM ${op.table} WHERE state = ANY($1::text[]) GROUP BY job_id, state`,
          states,
        ),
      );
    } else if (uncounted.length > 0) {
      add(
        await db.$queryRawUnsafe(
          `SELECT job_id::text AS job_id, state, count(*)::bigint AS n FROM ${op.table} WHERE job_id = ANY($1::uuid[]) AND state = ANY($2::text[]) GROUP BY job_id, state`,
          uncounted.map((j) => j.id),
          states,
        ),
      );
    }
    for (const j of uncounted) if (j.finished) memo.set(j.id, perJob.get(j.id)!);
  }

  const totals = new Map<string, LetterTotal>();
  for (const j of jobs) {
    const counted = memo.get(j.id) ?? perJob.get(j.id);
    if (!counted) continue;
    for (const [outcome, n] of Object.entries(counted.counts) as Array<[LetterOutcome, number]>) {
      const key = `${counted.connectionId}\u0000${counted.operation}\u0000${outcome}`;
      const t = totals.get(key) ?? {
        connectionId: counted.connectionId,
        operation: counted.operation,
        outcome,
        letters: 0,
      };
      t.letters += n;
      totals.set(key, t);
    }
  }
  return [...totals.values()];
}

/** Upper bounds (seconds) of the job duration buckets: a scan takes seconds, a watched redrive hours. */
export const JOB_DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400] as const;

/** Finished jobs of one kind and end state: how many, their total duration, and how many took at most each bucket's bound. */
export interface JobDurations {
  kind: string;
  outcome: "succeeded" | "failed" | "cancelled";
  count: number;
  sumSeconds: number;
  /** Cumulative, one per JOB_DURATION_BUCKETS entry. */
  buckets: number[];
}

/**
 * Every finished job that ran (started, then finished), wall time from its first start to its end,
 * pauses included. One pass over the jobs table aggregated in the database: the answer is one row
 * per kind and end state, and the table holds one row per operator action (scan, redrive, discard,
 * safe move), not per letter, so the pass stays small. The bucket bounds are constants of this file.
 */
export async function jobDurations(db: Db): Promise<JobDurations[]> {
  const cols = JOB_DURATION_BUCKETS.map((le, i) => `count(*) FILTER (WHERE d <= ${le})::bigint AS b${i}`).join(", ");
  const rows = await db.$queryRawUnsafe<
    Array<Record<string, unknown> & { kind: string; state: JobDurations["outcome"]; n: bigint; s: number }>
  >(
    `SELECT kind, state, count(*)::bigint AS n, COALESCE(sum(d), 0)::float8 AS s, ${cols}
       FROM (SELECT kind, state, GREATEST(0, extract(epoch FROM finished_at - started_at))::float8 AS d
               FROM jobs
              WHERE state IN ('succeeded', 'failed', 'cancelled') AND started_at IS NOT NULL AND finished_at IS NOT NULL) f
      GROUP BY kind, state`,
  );
  return rows.map((r) => ({
    kind: r.kind,
    outcome: r.state,
    count: Number(r.n),
    sumSeconds: Number(r.s),
    buckets: JOB_DURATION_BUCKETS.map((_, i) => Number(r[`b${i}`])),
  }));
}

/** Failure groups of one DLQ in one lifecycle state (lib/triage/issue-lifecycle.ts), with the DLQ's owning team. */
export interface IssueStateCount {
  connectionId: string;
  queue: string;
  owner: string;
  state: string;
  groups: number;
}

/** Per DLQ and state, from failure_issues (one row per group, one small aggregate). */
export async function issueStateCounts(
  db: Db,
  ownerOf: (connectionId: string, queue: string) => { team: string } | null,
): Promise<IssueStateCount[]> {
  const rows = await db.$queryRawUnsafe<Array<{ connection_id: string; queue: string; state: string; n: number }>>(
    `SELECT connection_id, queue, state, count(*)::int AS n FROM failure_issues GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  );
  return rows.map((r) => ({
    connectionId: r.connection_id,
    queue: r.queue,
    owner: ownerOf(r.connection_id, r.queue)?.team ?? "",
    state: r.state,
    groups: Number(r.n),
  }));
}
