import { z } from "zod";
import type { DlqListing } from "@/lib/dlq/types";
import type { DlqOverviewRow } from "@/lib/operations/queries";
import { defineOperation } from "../registry";

const iso = z.iso.datetime();

/**
 * The operations sampler's latest figures of one DLQ (its dlq_status row with open findings and
 * the owner), as the operations overview shows them. Times are ISO 8601 UTC.
 */
const dlqOperationsSchema = z
  .object({
    sampledAt: iso.meta({
      description:
        "When the sampler last looked at this DLQ; every figure below is from then unless it says otherwise.",
    }),
    sampleError: z.string().nullable().meta({
      description: "Set when the last round could not reach the broker: the figures are from the round before.",
    }),
    missingSince: iso.nullable().meta({
      description: "Set when the DLQ was gone from the broker at the last rounds, from the first round that missed it.",
    }),
    oldestAt: iso.nullable().meta({
      description:
        "When the oldest letter was dead-lettered (or enqueued); null when neither the broker nor a scan told.",
    }),
    oldestAgeSeconds: z
      .number()
      .int()
      .nullable()
      .meta({ description: "Age of the oldest letter at `fetchedAt` of this answer, in seconds (from oldestAt)." }),
    oldestSource: z.enum(["broker", "scan"]).nullable().meta({
      description: "broker: read from the broker at sampledAt; scan: from the last scan of the DLQ, at oldestAsOf.",
    }),
    oldestAsOf: iso.nullable().meta({ description: "When the oldest letter's time was read." }),
    retentionMs: z.number().int().nullable().meta({
      description:
        "How long the broker keeps a letter in this DLQ (SQS retention, RabbitMQ message TTL, Kafka retention.ms); null when unlimited or unknown.",
    }),
    deadlineAt: iso.nullable().meta({
      description:
        "When the oldest letter will be lost to retention (oldestAt + retentionMs); null where either is unknown.",
    }),
    inflowPerMin: z.number().nullable().meta({ description: "Letters arriving per minute over the last hour." }),
    trend: z
      .array(z.number().int().nullable())
      .meta({ description: "Depth at each of the last 60 minutes, oldest first; null where no sample." }),
    openFindings: z.number().int().meta({
      description:
        "Open configuration findings about this DLQ (a missing DLX binding, retention shorter than the source's, no owner, ...).",
    }),
    worstFinding: z
      .enum(["critical", "warning", "info"])
      .nullable()
      .meta({ description: "The highest severity among the open findings; null when there are none." }),
    firingAlerts: z.number().int().meta({ description: "Alerts on this DLQ firing now." }),
    owner: z
      .object({
        team: z.string(),
        contact: z.string(),
        source: z
          .enum(["console", "config"])
          .meta({ description: "console: set on the owners page; config: the config file's owners." }),
      })
      .nullable()
      .meta({ description: "The team that owns this DLQ; null when no owner entry matches." }),
  })
  .meta({ id: "DlqOperations" });

const dlqSchema = z
  .object({
    name: z.string(),
    queueType: z.string().meta({ description: "classic | quorum | stream | standard | fifo | topic | unknown" }),
    depth: z.number().int().nullable().meta({ description: "Letters in the DLQ, where the broker tells." }),
    inFlight: z.number().int().nullable(),
    consumers: z.number().int().nullable(),
    origins: z
      .array(z.string())
      .meta({ description: "Queues or topics that dead-letter into this one, as far as the console can tell." }),
    source: z.enum(["config", "discovered", "config+discovered"]),
    readRisk: z
      .object({ kind: z.string(), message: z.string() })
      .nullable()
      .meta({ description: "Set when reading the DLQ can itself lose or move letters." }),
    warnings: z.array(z.object({ code: z.string(), label: z.string(), message: z.string() })),
    operations: dlqOperationsSchema.nullable().meta({
      description:
        "The operations sampler's latest figures; null when the DLQ was never sampled or the token's role lacks ops:read.",
    }),
  })
  .meta({ id: "Dlq" });

const connectionSchema = z
  .object({
    connectionId: z.string(),
    displayName: z.string(),
    kind: z.enum(["rabbitmq", "sqs", "kafka", "pulsar"]),
    status: z
      .enum(["ok", "error"])
      .meta({ description: "error: the broker could not be listed; `error` says why, `dlqs` is empty." }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    dlqs: z.array(dlqSchema),
  })
  .meta({ id: "Connection" });

export const dlqListSchema = z
  .object({
    connections: z.array(connectionSchema),
    fetchedAt: z.iso.datetime(),
  })
  .meta({ id: "DlqList" });

export const listDlqsOperation = defineOperation({
  method: "get",
  tag: "DLQs",
  path: "/dlqs",
  operationId: "listDlqs",
  summary: "Connections and their DLQs with depths",
  description:
    "Every configured connection with its DLQs and figures. A broker that is down is a connection with status `error`; the others still list. Needs dlq:list (every role). " +
    "Each DLQ carries the operations sampler's latest figures (`operations`: oldest letter, retention deadline, trend, findings, owner) for roles with ops:read, read for all DLQs at once.",
  problems: [403],
  response: dlqListSchema,
});

function operationsOf(r: DlqOverviewRow | undefined, now: number): z.input<typeof dlqOperationsSchema> | null {
  if (!r) return null;
  return {
    sampledAt: r.sampledAt,
    sampleError: r.error,
    missingSince: r.missingSince,
    oldestAt: r.oldestAt,
    oldestAgeSeconds:
      r.oldestAt === null ? null : Math.max(0, Math.floor((now - new Date(r.oldestAt).getTime()) / 1000)),
    oldestSource: r.oldestSource,
    oldestAsOf: r.oldestAsOf,
    retentionMs: r.retentionMs,
    deadlineAt: r.deadlineAt,
    inflowPerMin: r.inflowPerMin,
    trend: r.trend,
    openFindings: r.openFindings,
    worstFinding: r.worstFinding,
    firingAlerts: r.firingAlerts,
    owner: r.owner ? { team: r.owner.team, contact: r.owner.contact, source: r.owner.source } : null,
  };
}

/**
 * The v1 shape of a listing: fields outside the schema (capabilities, facts, partitions) are left
 * out. `status` is every sampled DLQ's status row (the operations overview's rows), or null when
 * the caller may not see them: then every DLQ's `operations` is null.
 */
export function toDlqList(
  listing: DlqListing,
  status: readonly DlqOverviewRow[] | null,
): z.output<typeof dlqListSchema> {
  const byDlq = new Map((status ?? []).map((r) => [`${r.connectionId}\u0000${r.queue}`, r]));
  const now = new Date(listing.fetchedAt).getTime();
  return dlqListSchema.parse({
    fetchedAt: listing.fetchedAt,
    connections: listing.connections.map((c) => ({
      ...c,
      dlqs: c.dlqs.map((d) => ({
        ...d,
        readRisk: d.readRisk ? { kind: d.readRisk.kind, message: d.readRisk.message } : null,
        operations: operationsOf(byDlq.get(`${c.connectionId}\u0000${d.name}`), now),
      })),
    })),
  });
}
