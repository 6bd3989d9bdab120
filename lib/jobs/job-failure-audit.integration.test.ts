import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { jobStore } from "./store";
import type { JobKind } from "./types";
import { JobWorker } from "./worker";

/**
 * A job that ends failed is on record for whoever started it, whatever its kind: one audit row
 * under the job id, outcome "failure", with the reason the job page shows and never the raw
 * exception text. Real Postgres; the handlers stand in for a run that breaks.
 */
const KINDS: Array<[JobKind, string]> = [
  ["scan", "triage.scan_finished"],
  ["redrive", "redrive.finished"],
  ["discard", "discard.finished"],
  ["safe-move", "dlq.safe_move_finished"],
];

describe("failed job endings are audited", () => {
  it.each(KINDS)(
    "a %s job that fails writes one %s row with outcome failure and the user-facing reason",
    async (kind, action) => {
      const creator = randomUUID();
      const job = await jobStore().enqueue({
        kind,
        connectionId: "jobs-audit-test",
        queue: `q-${randomUUID().slice(0, 8)}`,
        createdBy: creator,
      });
      const userMessage = `The broker could not be reached (${kind}).`;
      const fail = async () => {
        throw new AppError("unavailable:broker", {
          message: "ECONNREFUSED 127.0.0.1:5672 internal detail",
          userMessage,
        });
      };
      await new JobWorker({
        handlers: { [kind]: fail },
        owner: `fa-${randomUUID().slice(0, 6)}`,
        leaseMs: 10_000,
        scope: { jobIds: [job.id] },
      }).runOnce();
      expect(await jobStore().get(job.id)).toMatchObject({ state: "failed", error: userMessage });
      const rows = await getDb().auditEvent.findMany({ where: { operationId: job.id } });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        action,
        outcome: "failure",
        actorId: creator,
        target: job.id,
        connectionId: "jobs-audit-test",
        queue: job.queue,
      });
      expect(rows[0].details).toMatchObject({ state: "failed", kind, error: userMessage });
      expect(JSON.stringify(rows[0].details)).not.toContain("ECONNREFUSED");
    },
  );

  it("an unexpected error is recorded with the generic reason, not its text", async () => {
    const job = await jobStore().enqueue({
      kind: "redrive",
      connectionId: "jobs-audit-test",
      queue: `q-${randomUUID().slice(0, 8)}`,
      createdBy: randomUUID(),
    });
    const boom = async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'secretField')");
    };
    const spy = console.error;
    console.error = () => undefined;
    try {
      await new JobWorker({
        handlers: { redrive: boom },
        owner: `fa-${randomUUID().slice(0, 6)}`,
        leaseMs: 10_000,
        scope: { jobIds: [job.id] },
      }).runOnce();
    } finally {
      console.error = spy;
    }
    const rows = await getDb().auditEvent.findMany({ where: { operationId: job.id } });
    expect(rows.map((r) => [r.action, r.outcome])).toEqual([["redrive.finished", "failure"]]);
    expect((rows[0].details as { error: string }).error).toBe(
      "The job stopped on an unexpected error; it was logged. Start it again.",
    );
    expect(JSON.stringify(rows[0].details)).not.toContain("secretField");
  });
});
