import { runBrokerContract } from "@/lib/brokers/contract-suite/read";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";

runBrokerContract("rabbitmq", async () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig(), { idleMs: 500 });
  return {
    adapter,
    createDlq: async (letters) => (await kit.dlqByReject(letters)).dlq,
    deadAdapter: () =>
      new RabbitMqAdapter(testConfig({ url: "amqp://127.0.0.1:1", management: { url: "http://127.0.0.1:1" } }), {
        connectTimeoutMs: 1000,
      }),
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
  };
});
