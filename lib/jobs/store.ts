import "server-only";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { Prisma, type PrismaClient } from "@/lib/generated/prisma/client";
import type { JobKind, JobProgress, JobRecord, JobState } from "./types";

/** The lease was taken over by another worker (ours expired): stop without writing anything. */
export class LeaseLostError extends Error {
  constructor(jobId: string) {
    super(`lease on job ${jobId} lost`);
    this.name = "LeaseLostError";
  }
}

/** A Postgres unique violation (23505), however the driver adapter wraps it. */
export function isUniqueViolation(e: unknown): boolean {
  if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") return true;
  const text = e instanceof Error ? `${e.message} ${JSON.stringify((e as { meta?: unknown }).meta ?? {})}` : String(e);
  return /23505|unique constraint|duplicate key/i.test(text);
}

/** Narrows what a claim may pick. Absent fields do not narrow. */
export interface ClaimScope {
  /** Only these jobs. */
  jobIds?: readonly string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/**
 * Jobs in Postgres. Claims are one UPDATE over a `FOR UPDATE SKIP LOCKED` pick, so any number of
 * console processes can poll the same table; a job whose lease expired (its process died) is picked
 * again and resumes from its checkpoint.
 */
export class JobStore {
  constructor(private readonly db: () => PrismaClient = getDb) {}

  /** Queues a job; `conflict:job` when the DLQ already has an active job of this kind. */
  async enqueue(input: {
    kind: JobKind;
    connectionId: string;
    queue: string;
    params?: Record<string, unknown>;
    createdBy?: string | null;
  }): Promise<JobRecord> {
    return this.db().job.create({
      data: {
        kind: input.kind,
        connectionId: input.connectionId,
        queue: input.queue,
        params: (input.params ?? {}) as Prisma.InputJsonObject,
        createdBy: input.createdBy ?? null,
      },
    });
  }

  get(id: string): Promise<JobRecord | null> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return Promise.resolve(null);
    return this.db().job.findUnique({ where: { id } });
  }

  /** Newest first; keyset on (createdAt, id) via `before` (a job id). */
  async list(
    filter: { kind?: JobKind; connectionId?: string; queue?: string; states?: JobState[] },
    limit = 50,
  ): Promise<JobRecord[]> {
    return this.db().job.findMany({
      where: {
        ...(filter.kind ? { kind: filter.kind } : {}),
        ...(filter.connectionId ? { connectionId: filter.connectionId } : {}),
        ...(filter.queue ? { queue: filter.queue } : {}),
        ...(filter.states ? { state: { in: filter.states } } : {}),
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: Math.min(Math.max(limit, 1), 200),
    });
  }

  /**
   * Takes the oldest runnable job of these kinds: a queued one whose DLQ no other job holds, or a
   * running/cancelling one whose lease expired. Returns null when there is none, or when another
   * claimer won the same DLQ at the same moment (the partial unique index refuses the second).
   * `scope.jobIds` narrows the pick to these jobs (a test's or a script's worker that must not run
   * jobs left by others); ids that are not uuids claim nothing.
   */
  async claim(
    owner: string,
    kinds: readonly string[],
    leaseMs: number,
    scope: ClaimScope = {},
  ): Promise<JobRecord | null> {
    const ids = scope.jobIds ? scope.jobIds.filter((id) => UUID.test(id)) : null;
    if (ids && ids.length === 0) return null;
    const sql = `
      WITH pick AS (
        SELECT j.id FROM jobs j
        WHERE j.kind = ANY (string_to_array($1, ','))
          AND ($4::uuid[] IS NULL OR j.id = ANY ($4::uuid[]))
          AND (
            (j.state = 'queued' AND NOT EXISTS (
               SELECT 1 FROM jobs h
               WHERE h.connection_id = j.connection_id AND h.queue = j.queue
                 AND h.state IN ('running', 'paused', 'cancelling')))
            OR (j.state IN ('running', 'cancelling') AND j.lease_expires_at < now())
          )
        ORDER BY j.created_at, j.id
        LIMIT 1
        FOR UPDATE OF j SKIP LOCKED
      )
      UPDATE jobs SET
        state = CASE WHEN jobs.state = 'queued' THEN 'running' ELSE jobs.state END,
        lease_owner = $2,
        lease_expires_at = now() + ($3::int * interval '1 millisecond'),
        heartbeat_at = now(),
        started_at = COALESCE(jobs.started_at, now()),
        attempts = jobs.attempts + 1
      FROM pick WHERE jobs.id = pick.id
      RETURNING jobs.id`;
    let rows: Array<{ id: string }>;
    try {
      rows = await this.db().$transaction((tx) =>
        tx.$queryRawUnsafe<Array<{ id: string }>>(sql, kinds.join(","), owner, Math.round(leaseMs), ids),
      );
    } catch (e) {
      if (isUniqueViolation(e)) return null;
      throw e;
    }
    if (rows.length === 0) return null;
    return this.db().job.findUnique({ where: { id: rows[0].id } });
  }

  /** Extends the lease and saves progress/checkpoint; throws LeaseLostError when the job is no longer ours. */
  async heartbeat(
    jobId: string,
    owner: string,
    leaseMs: number,
    update: { progress?: JobProgress; checkpoint?: unknown } = {},
  ): Promise<{ cancelRequested: boolean }> {
    const rows = await this.db().$queryRawUnsafe<Array<{ cancel_requested: boolean }>>(
      `UPDATE jobs SET
         lease_expires_at = now() + ($3::int * interval '1 millisecond'),
         heartbeat_at = now(),
         progress = COALESCE($4::jsonb, progress),
         checkpoint = COALESCE($5::jsonb, checkpoint)
       WHERE id = $1::uuid AND lease_owner = $2 AND state IN ('running', 'cancelling')
       RETURNING cancel_requested`,
      jobId,
      owner,
      Math.round(leaseMs),
      json(update.progress),
      json(update.checkpoint),
    );
    if (rows.length === 0) throw new LeaseLostError(jobId);
    return { cancelRequested: rows[0].cancel_requested };
  }

  /** Ends a run; only the lease holder can. Returns false when the lease was lost meanwhile. */
  async finish(
    jobId: string,
    owner: string,
    outcome: { state: "succeeded" | "cancelled" | "failed"; error?: string | null; progress?: JobProgress },
  ): Promise<boolean> {
    const n = await this.db().$executeRawUnsafe(
      `UPDATE jobs SET state = $3, error = $4, progress = COALESCE($5::jsonb, progress), finished_at = now(),
         lease_owner = NULL, lease_expires_at = NULL
       WHERE id = $1::uuid AND lease_owner = $2 AND state IN ('running', 'cancelling')`,
      jobId,
      owner,
      outcome.state,
      outcome.error ?? null,
      json(outcome.progress),
    );
    return n === 1;
  }

  /** Gives the job back at once (this process is stopping): another worker resumes it from its checkpoint. */
  async release(jobId: string, owner: string): Promise<void> {
    await this.db().$executeRawUnsafe(
      `UPDATE jobs SET lease_owner = NULL, lease_expires_at = now() - interval '1 millisecond'
       WHERE id = $1::uuid AND lease_owner = $2 AND state IN ('running', 'cancelling')`,
      jobId,
      owner,
    );
  }

  /**
   * Asks a job to stop. Queued or paused jobs are cancelled at once; a running one becomes
   * `cancelling` and its handler stops at the next batch. Returns the job's state after the request.
   */
  /**
   * Asks a job to stop. A queued job is cancelled at once; a running one becomes `cancelling` and
   * its handler stops at its next checkpoint. A paused one is cancelled at once, or, with
   * `runPaused` (it has cleanup to do), becomes `cancelling` with an expired lease so that a worker
   * claims it and its handler ends it.
   */
  async requestCancel(
    jobId: string,
    opts: { runPaused?: boolean } = {},
    record?: (tx: Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">, state: JobState) => Promise<unknown>,
  ): Promise<JobState> {
    const cancel = async (db: Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">) => {
      const rows = await db.$queryRawUnsafe<Array<{ state: JobState }>>(
        `UPDATE jobs SET cancel_requested = true,
         state = CASE WHEN state = 'queued' OR (state = 'paused' AND NOT $2) THEN 'cancelled' WHEN state IN ('running', 'paused') THEN 'cancelling' ELSE state END,
         lease_expires_at = CASE WHEN state = 'paused' AND $2 THEN now() - interval '1 millisecond' ELSE lease_expires_at END,
         finished_at = CASE WHEN state = 'queued' OR (state = 'paused' AND NOT $2) THEN now() ELSE finished_at END
       WHERE id = $1::uuid RETURNING state`,
        jobId,
        opts.runPaused === true,
      );
      if (rows.length === 0) throw new AppError("not_found:job", { userMessage: "There is no such job." });
      if (record) await record(db, rows[0].state);
      return rows[0].state;
    };
    // With `record` (an audit row of the request, say), both commit together: a worker sees the
    // request only once that row exists, so the request is on record before anything it causes.
    return record
      ? this.db().$transaction((tx) => cancel(tx), { maxWait: 15_000, timeout: 15_000 })
      : cancel(this.db());
  }
}

let defaultStore: JobStore | null = null;
export function jobStore(): JobStore {
  defaultStore ??= new JobStore();
  return defaultStore;
}
