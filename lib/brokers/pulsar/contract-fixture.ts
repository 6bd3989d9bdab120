/**
 * The Pulsar fixtures of the shared contracts (read, redrive, remove): letters die into
 * `<source>-sub-DLQ` through a real Shared consumer with a dead-letter policy (test-kit), and what
 * arrives at an origin or target is read back with a plain WebSocket reader. A module of its own so
 * that several integration test files run the contracts without importing each other's tests.
 */
import { PulsarAdapter } from "@/lib/brokers/pulsar/adapter";
import { PulsarKit, dlqOf, testConfig, APP_SUBSCRIPTION } from "@/lib/brokers/pulsar/test-kit";
import { shortName, type TopicName } from "@/lib/brokers/pulsar/client";

export { dlqOf };
import type { BrokerContractFixture } from "@/lib/brokers/contract";
import type { ArrivedLetter, RedriveContractFixture, RedriveLetterInput } from "@/lib/brokers/contract-redrive";

export async function readContractFixture(): Promise<BrokerContractFixture> {
  const kit = new PulsarKit();
  await kit.ensureNamespace();
  const adapter = new PulsarAdapter(testConfig({ namespaces: [kit.ns] }));
  return {
    adapter,
    createDlq: async (letters) => shortName((await dlqOf(kit, letters)).dlq),
    deadAdapter: () =>
      new PulsarAdapter(testConfig({ id: "dead-pulsar", adminUrl: "http://127.0.0.1:1", timeoutSeconds: 2 })),
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
  };
}

export async function writeContractFixture(): Promise<RedriveContractFixture> {
  const kit = new PulsarKit();
  await kit.ensureNamespace();
  const adapter = new PulsarAdapter(testConfig({ namespaces: [kit.ns] }));
  const sources = new Map<string, { source: TopicName; dlq: TopicName; consumed: number }>();
  const read = async (t: TopicName): Promise<ArrivedLetter[]> =>
    (await kit.readAll(t)).map((f) => ({
      body: Buffer.from(f.payload ?? "", "base64"),
      headers: { ...(f.properties ?? {}) },
      messageId: f.properties?.["message-id"] ?? null,
      orderingKey: f.key ?? null,
    }));
  return {
    adapter,
    createDlq: async (letters: RedriveLetterInput[]) => {
      const { source, dlq } = await dlqOf(kit, letters);
      sources.set(shortName(dlq), { source, dlq, consumed: letters.length });
      return shortName(dlq);
    },
    originOf: (dlq) => ({ name: shortName(sources.get(dlq)!.source), read: () => read(sources.get(dlq)!.source) }),
    createQueue: async () => {
      const t = await kit.createTopic(kit.name("target"));
      return { name: shortName(t), read: () => read(t) };
    },
    deadLetterAgain: async (dlq) => {
      const s = sources.get(dlq)!;
      const total = (await kit.readAll(s.source)).length;
      // The application's subscription gets what arrived since and fails on it again.
      await kit.deadLetter(s.source, s.dlq, APP_SUBSCRIPTION, [], { expectNew: total - s.consumed });
      s.consumed = total;
    },
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
    removesFromDlq: true,
    orderingKeys: true,
  };
}
