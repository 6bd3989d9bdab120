import { z } from "zod";
import type { DlqListing } from "@/lib/dlq/types";
import { defineOperation } from "../registry";

const dlqSchema = z
  .object({
    name: z.string(),
    queueType: z.string().meta({ description: "classic | quorum | stream | standard | fifo | topic | unknown" }),
    depth: z.number().int().nullable().meta({ description: "Letters in the DLQ, where the broker tells." }),
    inFlight: z.number().int().nullable(),
    consumers: z.number().int().nullable(),
    origins: z.array(z.string()).meta({ description: "Queues or topics that dead-letter into this one, as far as the console can tell." }),
    source: z.enum(["config", "discovered", "config+discovered"]),
    readRisk: z
      .object({ kind: z.string(), message: z.string() })
      .nullable()
      .meta({ description: "Set when reading the DLQ can itself lose or move letters." }),
    warnings: z.array(z.object({ code: z.string(), label: z.string(), message: z.string() })),
  })
  .meta({ id: "Dlq" });

const connectionSchema = z
  .object({
    connectionId: z.string(),
    displayName: z.string(),
    kind: z.enum(["rabbitmq", "sqs", "kafka"]),
    status: z.enum(["ok", "error"]).meta({ description: "error: the broker could not be listed; `error` says why, `dlqs` is empty." }),
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
  description: "Every configured connection with its DLQs and figures. A broker that is down is a connection with status `error`; the others still list. Needs dlq:list (every role).",
  problems: [403],
  response: dlqListSchema,
});

/** The v1 shape of a listing: fields outside the schema (capabilities, facts, partitions) are left out. */
export function toDlqList(listing: DlqListing): z.output<typeof dlqListSchema> {
  return dlqListSchema.parse({
    fetchedAt: listing.fetchedAt,
    connections: listing.connections.map((c) => ({
      ...c,
      dlqs: c.dlqs.map((d) => ({ ...d, readRisk: d.readRisk ? { kind: d.readRisk.kind, message: d.readRisk.message } : null })),
    })),
  });
}
