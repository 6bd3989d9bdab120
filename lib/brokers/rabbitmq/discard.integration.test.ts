import { runRemoveContract } from "@/lib/brokers/contract-remove";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";

runRemoveContract("rabbitmq", async () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig(), { idleMs: 500 });
  return {
    adapter,
    createDlq: async (letters) => (await kit.dlqByReject(letters)).dlq,
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
    removesFromDlq: true,
  };
});
