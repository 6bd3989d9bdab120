import type { ManagedHeaders } from "@/lib/brokers/contract/markers";

/**
 * The properties Pulsar's client writes when it dead-letters or retries a message (REAL_TOPIC and
 * its siblings; matched without regard to case, as every declaration is).
 */
export const PULSAR_MANAGED_HEADERS: ManagedHeaders = {
  managedBy: "Pulsar's client (dead-letter and retry properties)",
  names: [
    "REAL_TOPIC",
    "REAL_SUBSCRIPTION",
    "ORIGIN_MESSAGE_ID",
    "ORIGIN_MESSAGE_IDY_TIME",
    "RECONSUMETIMES",
    "DELAY_TIME",
    "REAL_TOPIC_PARTITION",
  ],
  prefixes: [],
};
