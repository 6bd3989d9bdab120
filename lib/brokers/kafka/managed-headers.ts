import type { ManagedHeaders } from "@/lib/brokers/contract/markers";

/**
 * The headers Kafka's dead-letter writers add to a record: Spring's recoverer (kafka_dlt-*), Kafka
 * Connect's reporter (__connect.errors.*) and Kafka Streams' (__streams.errors.*). See headers.ts.
 */
export const KAFKA_MANAGED_HEADERS: ManagedHeaders = {
  managedBy: "Kafka's dead-letter writers (Spring kafka_dlt-*, Connect and Streams errors)",
  names: [],
  prefixes: ["kafka_dlt-", "__connect.errors.", "__streams.errors."],
};
