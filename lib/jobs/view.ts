import type { JobProgress, JobRecord, JobState } from "./types";

/** What every job's view shows (a scan, redrive, discard or the generic job list): the job row's own fields. */
export interface JobViewBase {
  id: string;
  connectionId: string;
  queue: string;
  state: JobState;
  progress: JobProgress;
  error: string | null;
  cancelRequested: boolean;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  heartbeatAt: string | null;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function jobViewBase(j: JobRecord): JobViewBase {
  return {
    id: j.id,
    connectionId: j.connectionId,
    queue: j.queue,
    state: j.state as JobState,
    progress: (j.progress ?? {}) as JobProgress,
    error: j.error,
    cancelRequested: j.cancelRequested,
    createdAt: j.createdAt.toISOString(),
    startedAt: iso(j.startedAt),
    finishedAt: iso(j.finishedAt),
    heartbeatAt: iso(j.heartbeatAt),
  };
}
