import "server-only";
import { processState } from "@/lib/process-state";

const handlers = processState("shutdown", () => ({ installed: false }));

/** Closes broker connections and the database, then exits. Idempotent. */
export function installShutdownHandlers() {
  if (handlers.installed) return;
  handlers.installed = true;
  let closing = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    const hardExit = setTimeout(() => process.exit(1), 10_000);
    hardExit.unref();
    try {
      // First: running jobs stop at their next batch and give their leases back.
      const { stopJobWorker } = await import("@/lib/jobs/process-worker");
      await stopJobWorker();
    } catch (e) {
      console.error(`[shutdown] stopping the job worker failed: ${(e as Error).message}`);
    }
    try {
      const { closeAllAdapters } = await import("@/lib/connections/registry");
      await closeAllAdapters();
    } catch (e) {
      console.error(`[shutdown] closing broker connections failed: ${(e as Error).message}`);
    }
    try {
      const { closeDb } = await import("@/lib/db");
      await closeDb();
    } catch (e) {
      console.error(`[shutdown] closing the database failed: ${(e as Error).message}`);
    }
    console.log(`[shutdown] ${signal}: closed cleanly`);
    process.exit(0);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}
