/**
 * What the integration tests of the engines (redrive, discard) share: an operator of their own,
 * the broker kit's cleanup with the registry's adapters closed after a file, and a scan of a DLQ
 * into the triage index, run to its end by a worker that runs only that job. Never used by the app.
 */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";

/** A new operator whose email names the test file (`tag`). */
export async function newOperator(tag: string): Promise<Actor> {
  const u = await createUser({
    email: `op-${randomUUID().slice(0, 8)}@${tag}.test`,
    role: "operator",
    password: "a-long-enough-password",
  });
  return { id: u.id, email: u.email, name: null, role: "operator" };
}

/** After a file: its queues or topics removed, then the registry's adapters closed. */
export async function cleanUp(kit: { cleanup(): Promise<void> }): Promise<void> {
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
}

/** Scans `queue` of the registry's `connectionId` into the triage index; fails unless the scan succeeds. */
export async function scanDlq(connectionId: string, queue: string): Promise<void> {
  const kind = `scan-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({ kind: kind as "scan", connectionId, queue, params: { acceptRisk: true } });
  await new JobWorker({
    handlers: { [kind]: scanHandler() },
    owner: kind,
    leaseMs: 30_000,
    scope: { jobIds: [job.id] },
  }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}
