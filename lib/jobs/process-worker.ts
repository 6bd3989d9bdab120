import "server-only";
import { processState } from "@/lib/process-state";
import type { JobWorker } from "./worker";

/**
 * The console process's one job worker (composed in lib/worker.ts, stopped by lib/shutdown.ts),
 * the same for every copy of this module and across Next's dev reloads. DLQ_JOBS_WORKER=0 turns it
 * off (e.g. a replica that should only serve pages).
 */
const store = processState("job-worker", () => ({ worker: null as JobWorker | null }));

/** Builds and starts the process's worker once; later calls return the running one. */
export function runProcessWorker(build: () => JobWorker): JobWorker | null {
  if (process.env.DLQ_JOBS_WORKER === "0") return null;
  if (store.worker) return store.worker;
  const worker = build();
  worker.start();
  store.worker = worker;
  return worker;
}

/** Polls at once (a job was just queued here); a no-op where no worker runs. */
export function wakeJobWorker(): void {
  store.worker?.wake();
}

export async function stopJobWorker(): Promise<void> {
  const w = store.worker;
  store.worker = null;
  await w?.stop();
}
