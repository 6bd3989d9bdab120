/**
 * A console's job worker in its own process, as instrumentation.ts runs it, for the fault tests:
 *   tsx --conditions=react-server lib/redrive/testing/worker-process.ts
 * Env: DATABASE_URL (required), FAULT_JOB_ID (required: the one job it may claim, so that jobs left
 * by other tests are never its business), FAULT_LEASE_MS (default 3000), FAULT_OWNER. Prints
 * "ready" once polling; SIGTERM stops it gracefully (leases given back); SIGKILL is the point of it.
 */
import { JobWorker } from "@/lib/jobs/worker";
import { redriveHandler } from "@/lib/redrive/handler";

const jobId = process.env.FAULT_JOB_ID;
if (!jobId) throw new Error("FAULT_JOB_ID is required");
const worker = new JobWorker({
  handlers: { redrive: redriveHandler({ returnCheckMs: 300 }) },
  owner: process.env.FAULT_OWNER ?? `fault-${process.pid}`,
  leaseMs: Number(process.env.FAULT_LEASE_MS ?? 3000),
  pollMs: 100,
  concurrency: 1,
  scope: { jobIds: [jobId] },
});
worker.start();
// The worker's timers are unref'd (inside the console, the server keeps the process alive). Here
// nothing else would until the first claim opens a database connection: the process could exit
// with code 0 right after "ready" (seen in the SIGKILL test: the restarted worker was gone and the
// job never finished). This process lives until it is signalled.
const keepAlive = setInterval(() => undefined, 60_000);
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  clearInterval(keepAlive);
  void worker.stop().finally(() => process.exit(0));
});
