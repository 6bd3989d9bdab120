import { runBrokerContract } from "@/lib/brokers/contract-suite/read";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

runBrokerContract("rabbitmq", async () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
  return {
    adapter,
    createDlq: async (letters) => (await kit.dlqByReject(letters)).dlq,
    deadAdapter: () =>
      new RabbitMqAdapter(testConfig({ url: "amqp://127.0.0.1:1", management: { url: "http://127.0.0.1:1" } }), {
        allManagedHeaders: MANAGED_HEADERS,
        connectTimeoutMs: 1000,
      }),
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
  };
});
