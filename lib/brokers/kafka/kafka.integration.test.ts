import { runBrokerContract } from "@/lib/brokers/contract-suite/read";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

runBrokerContract("kafka", async () => {
  const kit = new KafkaKit();
  const adapter = new KafkaAdapter(testConfig(), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  return {
    adapter,
    // Real flow: records go to a source topic; the application's consumer fails on them and
    // publishes them to `<source>.DLT` with Spring Kafka's headers.
    createDlq: async (letters) => (await kit.springDlt(letters)).dlt,
    deadAdapter: () =>
      new KafkaAdapter(testConfig({ brokers: ["127.0.0.1:1"] }), {
        allManagedHeaders: MANAGED_HEADERS,
        client: { connectionTimeoutMs: 1000, retries: 1 },
        handledStore: null,
      }),
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
  };
});
