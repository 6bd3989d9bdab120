import { runRemoveContract } from "@/lib/brokers/contract-remove";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, MOTO_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";

for (const [label, endpoint, over, fifo] of [
  ["sqs (ElasticMQ)", ELASTICMQ_ENDPOINT, {}, false],
  ["sqs FIFO (ElasticMQ)", ELASTICMQ_ENDPOINT, {}, true],
  ["sqs (moto)", MOTO_ENDPOINT, { messageMoveTasks: false }, false],
] as const) {
  runRemoveContract(label, async () => {
    const kit = new SqsKit(endpoint);
    const adapter = new SqsAdapter(testConfig(endpoint, { queueNamePrefix: kit.prefix, ...over }));
    return {
      adapter,
      createDlq: async (letters) => (await kit.dlqByRedrive(letters.map((l, i) => ({ ...l, groupId: fifo ? `g-${i % 2}` : undefined })), { fifo, maxReceiveCount: 5 })).dlq,
      cleanup: async () => {
        await adapter.close();
        await kit.cleanup();
      },
      removesFromDlq: true,
    };
  });
}
