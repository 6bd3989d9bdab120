import "server-only";
import { hostname } from "node:os";
import { deleteExpiredLetters, retentionDays } from "@/lib/triage/index-store";
import { sweepArchive } from "@/lib/archive/retention";
import { checkpointAuditChain } from "@/lib/audit/checkpoint-task";
import { discardHandler } from "@/lib/discard/handler";
import { sweepDiscardLeftovers } from "@/lib/discard/leftovers";
import { adapterFor } from "@/lib/use-case/connection";
import { getDb } from "@/lib/db";
import { resumeReachable } from "@/lib/redrive/auto-resume";
import { redriveHandler } from "@/lib/redrive/handler";
import { safeMoveHandler } from "@/lib/safety/handler";
import { scanHandler } from "@/lib/triage/scan";
import { regroupStaleDlqs } from "@/lib/triage/regroup";
import { indexRound } from "@/lib/triage/indexer";
import { fillLetterSearch } from "@/lib/triage/letter-search";
import { headerCountsTask } from "@/lib/triage/header-stats";
import { listAdapters } from "@/lib/connections/registry";
import { readsFree } from "@/lib/operations/top-failure-sample";
import { JobWorker } from "@/lib/jobs/worker";
import { runProcessWorker, wakeJobWorker } from "@/lib/jobs/process-worker";
import { loadConfig } from "@/lib/config";
import { sampleRound } from "@/lib/operations/sampler";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { deliverAlerts, pruneAlerts } from "@/lib/alerts/deliver";
import { pruneSamples } from "@/lib/operations/samples";
import { sampleConsumerGroups } from "@/lib/consumer-groups/sampler";
import { groupSkipHandler } from "@/lib/consumer-groups/skip-handler";

/**
 * Where the job worker is composed: the handler of every job kind and the maintenance rounds of
 * every feature. lib/jobs is the engine and knows none of them. Started by instrumentation.ts.
 */
const samplerErrors = new Map<string, string | null>();

export function startJobWorker(): JobWorker | null {
  const ops = loadConfig().operations;
  const indexing = loadConfig().triage.indexing;
  const indexerOwner = `${hostname()}:${process.pid}:indexer`;
  return runProcessWorker(
    () =>
      new JobWorker({
        handlers: {
          scan: scanHandler(),
          redrive: redriveHandler(),
          discard: discardHandler(),
          "safe-move": safeMoveHandler(),
          "group-skip": groupSkipHandler(),
        },
        maintenance: [
          {
            name: "triage-retention",
            everyMs: 60 * 60 * 1000,
            run: async () => {
              const n = await deleteExpiredLetters(retentionDays());
              if (n > 0)
                console.log(
                  `[triage] retention: deleted ${n} index rows of letters gone over ${retentionDays()} days ago`,
                );
            },
          },
          {
            // Groups made under an older grouping are regrouped by a scan where reading is free (lib/triage/regroup.ts).
            name: "triage-regroup",
            everyMs: 10 * 60 * 1000,
            firstAfterMs: 20_000,
            leased: true,
            run: async () => {
              const queued = await regroupStaleDlqs((id) => {
                try {
                  return readsFree(adapterFor(id));
                } catch {
                  return false;
                }
              });
              if (queued.length > 0) {
                console.log(`[triage] regrouping ${queued.length} DLQ(s) scanned under an older grouping`);
                wakeJobWorker();
              }
            },
          },
          {
            // Groups kept current where reading is free, from the sampler's figures (lib/triage/indexer.ts).
            name: "triage-indexer",
            everyMs: indexing.roundSeconds * 1000,
            firstAfterMs: 5_000,
            leased: true,
            run: async () => {
              const r = await indexRound({
                adapters: listAdapters,
                config: () => loadConfig().triage.indexing,
                owner: indexerOwner,
              });
              if (r.dlqs.some((d) => d.jobId && d.outcome === "queued")) wakeJobWorker();
            },
          },
          {
            // Text search of letters written since the last fill (lib/triage/letter-search.ts).
            name: "triage-search-fill",
            everyMs: 5_000,
            firstAfterMs: 3_000,
            leased: true,
            run: async () => void (await fillLetterSearch(getDb(), { maxMs: 4_000 })),
          },
          // Header values a role that may scan asked to group by, counted for their DLQ (lib/triage/header-stats.ts).
          headerCountsTask(),
          {
            // Redrives that paused because their broker went away resume once it answers again.
            name: "redrive-auto-resume",
            everyMs:
              Number(process.env.DLQ_REDRIVE_AUTO_RESUME_MS) > 0
                ? Number(process.env.DLQ_REDRIVE_AUTO_RESUME_MS)
                : 10_000,
            run: async () => {
              const ids = await resumeReachable();
              if (ids.length > 0) {
                console.log(`[redrive] resumed ${ids.length} redrive(s) whose broker answers again`);
                wakeJobWorker();
              }
            },
          },
          {
            // Signed checkpoints of the audit chain's head, outside the database (lib/audit/checkpoint-task.ts).
            name: "audit-checkpoint",
            everyMs: 60_000,
            run: async () => void (await checkpointAuditChain()),
          },
          {
            // Letters a failed discard left flagged (lost acks) are removed once their broker answers.
            name: "discard-leftovers",
            everyMs: 60_000,
            run: async () => {
              const r = await sweepDiscardLeftovers(getDb(), adapterFor);
              if (r.removed > 0)
                console.log(`[discard] leftover check: removed ${r.removed} DLQ copies of discarded letters`);
            },
          },
          {
            // DLQ vitals, retention deadlines and configuration findings (lib/operations/sampler.ts).
            name: "operations-sampler",
            everyMs: ops.sampleIntervalSeconds * 1000,
            firstAfterMs: 2_000,
            leased: true,
            run: async () => {
              // A broker that stays down is said once, and again when it answers.
              for (const c of (await sampleRound()).connections) {
                if ((c.error ?? null) !== (samplerErrors.get(c.connectionId) ?? null)) {
                  console.warn(
                    c.ok
                      ? `[operations] ${c.connectionId}: answering again`
                      : `[operations] ${c.connectionId}: ${c.error}`,
                  );
                }
                samplerErrors.set(c.connectionId, c.error);
              }
              // Alert rules judge what the round just recorded; a message goes out on each change only.
              await evaluateAlerts().catch((e) => console.error(`[alerts] evaluation failed: ${(e as Error).message}`));
            },
          },
          {
            // Consumer groups of Kafka connections: offsets, lag, stuck partitions (lib/consumer-groups/sampler.ts).
            name: "consumer-groups-sampler",
            everyMs: ops.sampleIntervalSeconds * 1000,
            firstAfterMs: 3_000,
            leased: true,
            run: async () => {
              for (const c of (await sampleConsumerGroups()).connections) {
                const key = `groups:${c.connectionId}`;
                if ((c.error ?? null) !== (samplerErrors.get(key) ?? null)) {
                  console.warn(
                    c.ok
                      ? `[consumer-groups] ${c.connectionId}: answering again`
                      : `[consumer-groups] ${c.connectionId}: ${c.error}`,
                  );
                }
                samplerErrors.set(key, c.error);
              }
            },
          },
          {
            name: "operations-sample-retention",
            everyMs: 60 * 60 * 1000,
            leased: true,
            run: async () => {
              const n = await pruneSamples(ops.sampleRetentionDays);
              if (n > 0) console.log(`[operations] retention: deleted ${n} DLQ samples past their span`);
            },
          },
          {
            // Due webhook messages; every replica may send (a row is claimed with SKIP LOCKED).
            name: "alert-delivery",
            everyMs: 10_000,
            run: async () => void (await deliverAlerts()),
          },
          {
            name: "alert-prune",
            everyMs: 60 * 60 * 1000,
            leased: true,
            run: async () => void (await pruneAlerts()),
          },
          {
            name: "archive-retention",
            everyMs: 60 * 60 * 1000,
            run: async () => {
              const n = await sweepArchive();
              if (n > 0) console.log(`[archive] retention: deleted ${n} archived letters past their expiry`);
            },
          },
        ],
      }),
  );
}
