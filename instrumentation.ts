/**
 * Runs once per `next start` process (not during the build). The server is started with
 * NEXT_MANUAL_SIG_HANDLE=true so that the database (PGlite in particular) and broker connections
 * are closed before the process exits; Next's own handler would exit first and lose writes.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { installShutdownHandlers } = await import("@/lib/shutdown");
  installShutdownHandlers();
  // Background jobs (triage scans): one worker per server process, sharing the database client.
  const { startJobWorker } = await import("@/lib/worker");
  startJobWorker();
}
