import "server-only";
import { loadConfig, type ConnectionConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { PulsarAdapter } from "@/lib/brokers/pulsar/adapter";
import { processState } from "@/lib/process-state";
import { prismaHandledStore } from "./kafka-handled-store";
import { MANAGED_HEADERS } from "./managed-headers";

/**
 * One adapter per configured connection, built lazily from `loadConfig()` and handed what it
 * needs from outside the broker boundary (Kafka: the handled-offset store in the database) and the
 * union of every adapter's managed header names (managed-headers.ts), which each refuses. Kept
 * for the life of the process: one set for every copy of this module, so connections are neither
 * doubled nor leaked across Next's dev reloads.
 */
const store = processState("adapters", () => ({ adapters: null as Map<string, BrokerAdapter> | null }));

export function createAdapter(c: ConnectionConfig): BrokerAdapter {
  const allManagedHeaders = MANAGED_HEADERS;
  switch (c.kind) {
    case "rabbitmq":
      return new RabbitMqAdapter(c, { allManagedHeaders });
    case "sqs":
      return new SqsAdapter(c, { allManagedHeaders });
    case "kafka":
      return new KafkaAdapter(c, { handledStore: prismaHandledStore(), allManagedHeaders });
    case "pulsar":
      return new PulsarAdapter(c, { allManagedHeaders });
  }
}

function adapters(): Map<string, BrokerAdapter> {
  store.adapters ??= new Map(loadConfig().connections.map((c) => [c.id, createAdapter(c)]));
  return store.adapters;
}

export function listAdapters(): BrokerAdapter[] {
  return [...adapters().values()];
}

/** Throws `not_found:connection` for an id that is not configured. */
export function getAdapter(connectionId: string): BrokerAdapter {
  const a = adapters().get(connectionId);
  if (!a)
    throw new AppError("not_found:connection", { userMessage: `There is no broker connection "${connectionId}".` });
  return a;
}

/** Closes every adapter's connections; the next call builds them again (used at shutdown and by tests). */
export async function closeAllAdapters(): Promise<void> {
  const current = store.adapters;
  store.adapters = null;
  if (current) await Promise.allSettled([...current.values()].map((a) => a.close()));
}
