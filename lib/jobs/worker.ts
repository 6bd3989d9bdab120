import "server-only";
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { recordAudit } from "@/lib/audit";
import { asAppError, loggableError } from "@/lib/errors";
import { jobFailedEntry } from "./audit";
import { type JobStore, LeaseLostError, jobStore, type ClaimScope } from "./store";
import { holdTaskLease, releaseTaskLease } from "./task-lease";
import type { JobHandler, JobRecord } from "./types";

export interface MaintenanceTask {
  name: string;
  everyMs: number;
  run: () => Promise<void>;
  /** Runs in one replica at a time: only while this process holds the task's lease (lib/jobs/task-lease.ts). */
  leased?: boolean;
  /** First run this long after start (default: after `everyMs`). */
  firstAfterMs?: number;
}

export interface JobWorkerOptions {
  handlers: Record<string, JobHandler>;
  store?: JobStore;
  /** Identifies this process in `lease_owner`. */
  owner?: string;
  /** Idle poll interval (DLQ_JOBS_POLL_MS, default 2000). A poll is one indexed UPDATE. */
  pollMs?: number;
  /** Lease length (DLQ_JOBS_LEASE_MS, default 30000); heartbeats extend it every third of it. */
  leaseMs?: number;
  /** Jobs this process runs at once (DLQ_JOBS_CONCURRENCY, default 2). */
  concurrency?: number;
  maintenance?: MaintenanceTask[];
  /** Claims only jobs in this scope (e.g. a test's own job ids); default: any job of the handled kinds. */
  scope?: ClaimScope;
}

const envInt = (name: string, fallback: number) => {
  const n = Number.parseInt(process.env[name] ?? "", 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

/**
 * Polls the jobs table and runs what it claims. One per console process (instrumentation.ts);
 * `stop()` aborts running handlers at their next batch and gives their leases back, so a restarted
 * or another process resumes them at once.
 */
export class JobWorker {
  readonly owner: string;
  private readonly store: JobStore;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private maintenanceTimers: NodeJS.Timeout[] = [];
  private readonly maintenanceRunning = new Set<string>();
  private stopped = true;
  private polling = false;

  constructor(private readonly opts: JobWorkerOptions) {
    this.owner = opts.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.store = opts.store ?? jobStore();
    this.pollMs = opts.pollMs ?? envInt("DLQ_JOBS_POLL_MS", 2000);
    this.leaseMs = opts.leaseMs ?? envInt("DLQ_JOBS_LEASE_MS", 30_000);
    this.concurrency = opts.concurrency ?? envInt("DLQ_JOBS_CONCURRENCY", 2);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
    for (const task of this.opts.maintenance ?? []) {
      const t = setInterval(() => void this.runMaintenance(task), task.everyMs);
      t.unref();
      this.maintenanceTimers.push(t);
      if (task.firstAfterMs !== undefined) {
        const first = setTimeout(() => void this.runMaintenance(task), task.firstAfterMs);
        first.unref();
        this.maintenanceTimers.push(first);
      }
    }
  }

  /** One run of a maintenance task: never two at once in this process; a leased task only while its lease is held. */
  private async runMaintenance(task: MaintenanceTask): Promise<void> {
    if (this.stopped || this.maintenanceRunning.has(task.name)) return;
    this.maintenanceRunning.add(task.name);
    let renew: NodeJS.Timeout | undefined;
    try {
      // The lease outlives three missed rounds, so a holder that is merely slow keeps it.
      const ttlMs = task.everyMs * 3;
      if (task.leased && !(await holdTaskLease(task.name, this.owner, ttlMs))) return;
      // A round may take longer than the lease (counting a header of 10,000,000 letters took about
      // 50 s against 15 s): renewed while it runs, so no other replica starts the same round meanwhile.
      if (task.leased) {
        renew = setInterval(
          () => void holdTaskLease(task.name, this.owner, ttlMs).catch(() => undefined),
          task.everyMs,
        );
        renew.unref();
      }
      await task.run();
    } catch (e) {
      console.error(`[jobs] maintenance ${task.name} failed: ${(e as Error).message}`);
    } finally {
      clearInterval(renew);
      this.maintenanceRunning.delete(task.name);
      // Stopped meanwhile: stop() left this round's lease held until now.
      if (this.stopped && task.leased) await releaseTaskLease(task.name, this.owner).catch(() => undefined);
    }
  }

  /** Polls now instead of at the next interval (after a job was queued in this process). */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  /** Stops polling, asks running handlers to stop, waits for them, gives their leases back. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const t of this.maintenanceTimers) clearInterval(t);
    this.maintenanceTimers = [];
    // A round still running keeps its lease until it ends (runMaintenance gives it back then).
    const leased = (this.opts.maintenance ?? []).filter((t) => t.leased && !this.maintenanceRunning.has(t.name));
    await Promise.allSettled(leased.map((t) => releaseTaskLease(t.name, this.owner)));
    for (const r of this.running.values()) r.abort.abort();
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  get activeJobIds(): string[] {
    return [...this.running.keys()];
  }

  private schedule(ms: number) {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), ms);
    this.timer.unref();
  }

  private async poll() {
    if (this.stopped || this.polling) return;
    this.polling = true;
    try {
      while (!this.stopped && this.running.size < this.concurrency) {
        const job = await this.store.claim(this.owner, Object.keys(this.opts.handlers), this.leaseMs, this.opts.scope);
        if (!job) break;
        this.launch(job);
      }
    } catch (e) {
      console.error(`[jobs] poll failed: ${(e as Error).message}`);
    } finally {
      this.polling = false;
      this.schedule(this.pollMs);
    }
  }

  /** Claims and runs at most one job to its end (tests and scripts); returns it, or null. */
  async runOnce(): Promise<JobRecord | null> {
    const job = await this.store.claim(this.owner, Object.keys(this.opts.handlers), this.leaseMs, this.opts.scope);
    if (!job) return null;
    await this.launch(job);
    return job;
  }

  private launch(job: JobRecord): Promise<void> {
    const abort = new AbortController();
    const done = this.run(job, abort).finally(() => {
      this.running.delete(job.id);
      if (!this.stopped) this.schedule(0);
    });
    this.running.set(job.id, { abort, done });
    return done;
  }

  private async run(job: JobRecord, abort: AbortController): Promise<void> {
    const handler = this.opts.handlers[job.kind];
    let leaseLost = false;
    // Extends the lease while a batch takes long; a lost lease aborts the handler.
    const beat = setInterval(
      () => {
        this.store.heartbeat(job.id, this.owner, this.leaseMs).catch((e) => {
          if (e instanceof LeaseLostError) {
            leaseLost = true;
            abort.abort();
          }
        });
      },
      Math.max(250, Math.floor(this.leaseMs / 3)),
    );
    beat.unref();
    try {
      const outcome = await handler({
        job,
        signal: abort.signal,
        checkpoint: (u) => this.store.heartbeat(job.id, this.owner, this.leaseMs, u),
      });
      if (leaseLost) return;
      await this.store.finish(job.id, this.owner, outcome);
    } catch (e) {
      if (e instanceof LeaseLostError || leaseLost) return;
      if (abort.signal.aborted && this.stopped) {
        await this.store.release(job.id, this.owner).catch(() => undefined);
        return;
      }
      const app = asAppError(e);
      if (!app) console.error(`[jobs] ${job.kind} job ${job.id} failed:`, loggableError(e));
      const reason = app?.userMessage ?? "The job stopped on an unexpected error; it was logged. Start it again.";
      const ended = await this.store
        .finish(job.id, this.owner, { state: "failed", error: reason })
        .catch((err) => console.error(`[jobs] could not record the failure of ${job.id}: ${(err as Error).message}`));
      // Only the run that ended the job records the end (a lost lease wrote nothing).
      if (ended)
        await recordAudit(jobFailedEntry(job, reason)).catch((err) =>
          console.error(`[jobs] could not audit the failure of ${job.id}: ${(err as Error).message}`),
        );
    } finally {
      clearInterval(beat);
    }
  }
}
