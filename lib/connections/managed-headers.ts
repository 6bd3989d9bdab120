import { KAFKA_MANAGED_HEADERS } from "@/lib/brokers/kafka/managed-headers";
import { CONSOLE_MANAGED_HEADERS, managedHeaderMatcher, type ManagedHeaders } from "@/lib/brokers/contract/markers";
import { PULSAR_MANAGED_HEADERS } from "@/lib/brokers/pulsar/managed-headers";
import { RABBITMQ_MANAGED_HEADERS } from "@/lib/brokers/rabbitmq/managed-headers";
import { SQS_MANAGED_HEADERS } from "@/lib/brokers/sqs/managed-headers";

/**
 * Every header name a repair may never set or remove: each adapter's own declaration (its folder's
 * managed-headers.ts, the same object as its `managedHeaders`) and the console's. The registry hands
 * this union to every adapter it builds, so each broker refuses all of them, not only its own: a
 * letter bridged from Kafka into SQS still carries kafka_dlt-*. Plain data, no connection: tests
 * and benchmarks that build adapters themselves pass the same union.
 */
export const MANAGED_HEADERS: readonly ManagedHeaders[] = [
  RABBITMQ_MANAGED_HEADERS,
  SQS_MANAGED_HEADERS,
  KAFKA_MANAGED_HEADERS,
  PULSAR_MANAGED_HEADERS,
  CONSOLE_MANAGED_HEADERS,
];

/** True for a name in the union: locked in lib/repair's policy exactly as every adapter refuses it. */
export const isManagedHeader = managedHeaderMatcher(MANAGED_HEADERS);
