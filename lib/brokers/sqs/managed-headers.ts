import type { ManagedHeaders } from "@/lib/brokers/contract/markers";

/**
 * None of SQS's own: what SQS writes on a message (SentTimestamp, ApproximateReceiveCount,
 * AWSTraceHeader, ...) is system attributes, not message attributes, and a repair cannot name them
 * at all (repair.ts). SQS still refuses every other broker's names and the console's.
 */
export const SQS_MANAGED_HEADERS: ManagedHeaders = {
  managedBy: "SQS (none: its system attributes are not message attributes)",
  names: [],
  prefixes: [],
};
