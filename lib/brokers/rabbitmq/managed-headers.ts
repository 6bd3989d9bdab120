import type { ManagedHeaders } from "@/lib/brokers/contract/markers";

/**
 * The headers RabbitMQ writes when it dead-letters a message (x-death, x-first-death-*,
 * x-last-death-*) or counts its deliveries on a quorum queue (x-delivery-count).
 */
export const RABBITMQ_MANAGED_HEADERS: ManagedHeaders = {
  managedBy: "RabbitMQ (dead-letter history and the delivery count)",
  names: ["x-death", "x-delivery-count"],
  prefixes: ["x-first-death-", "x-last-death-"],
};
