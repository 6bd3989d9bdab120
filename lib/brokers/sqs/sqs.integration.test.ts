// The shared broker contract against two real SQS servers: ElasticMQ (everything) and moto (no
// message move tasks, no DeadLetterQueueSourceArn: declared in its config, never faked).
import { runBrokerContract } from "@/lib/brokers/contract-suite/read";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, MOTO_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

for (const [label, endpoint, over] of [
  ["sqs (ElasticMQ)", ELASTICMQ_ENDPOINT, {}],
  ["sqs (moto)", MOTO_ENDPOINT, { messageMoveTasks: false }],
] as const) {
  runBrokerContract(label, async () => {
    const kit = new SqsKit(endpoint);
    const adapter = new SqsAdapter(testConfig(endpoint, { queueNamePrefix: kit.prefix, ...over }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    return {
      adapter,
      createDlq: async (letters) => (await kit.dlqByRedrive(letters)).dlq,
      deadAdapter: () =>
        new SqsAdapter(testConfig("http://127.0.0.1:1"), {
          allManagedHeaders: MANAGED_HEADERS,
          connectTimeoutMs: 1000,
        }),
      cleanup: async () => {
        await adapter.close();
        await kit.cleanup();
      },
    };
  });
}
