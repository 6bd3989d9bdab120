/**
 * The Pulsar fixtures of the shared contracts (read, redrive, remove): letters die into
 * `<source>-sub-DLQ` through a real Shared consumer with a dead-letter policy (test-kit), and what
 * arrives at an origin or target is read back with a plain WebSocket reader. A module of its own so
 * that several integration test files run the contracts without importing each other's tests.
 */
import { PulsarAdapter } from "@/lib/brokers/pulsar/adapter";
import { PulsarKit, dlqOf, testConfig, APP_SUBSCRIPTION } from "@/lib/brokers/pulsar/test-kit";
import { PulsarSocket, shortName, topicPath, type TopicName } from "@/lib/brokers/pulsar/client";
import { letterIdOf } from "@/lib/brokers/pulsar/message-id";
import { readUnacked } from "@/lib/brokers/pulsar/reader";
import type { AdapterSetup } from "@/lib/brokers/contract/adapter";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { Letter } from "@/lib/brokers/contract/letter";

export { dlqOf };
import type { BrokerContractFixture } from "@/lib/brokers/contract-suite/read";
import type { ArrivedLetter, RedriveContractFixture, RedriveLetterInput } from "@/lib/brokers/contract-suite/redrive";

/**
 * The managed header names come from the test (lib/connections' union of every adapter's), since
 * this file, in a broker's folder, may import no other broker's (lib/layout.test.ts).
 */
export const readContractFixtureWith = (setup: AdapterSetup) => async (): Promise<BrokerContractFixture> => {
  const kit = new PulsarKit();
  await kit.ensureNamespace();
  const adapter = new PulsarAdapter(testConfig({ namespaces: [kit.ns] }), setup);
  return {
    adapter,
    createDlq: async (letters) => shortName((await dlqOf(kit, letters)).dlq),
    deadAdapter: () =>
      new PulsarAdapter(testConfig({ id: "dead-pulsar", adminUrl: "http://127.0.0.1:1", timeoutSeconds: 2 }), setup),
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
  };
};

/** The frame id (WebSocket form) of this letter if the subscription has not acknowledged it. */
async function unackedId(kit: PulsarKit, t: TopicName, sub: string, letterId: string): Promise<string | null> {
  for await (const m of readUnacked(kit.ep, kit.admin, t, sub))
    if (letterIdOf(m.id) === letterId) return m.frame.messageId;
  return null;
}

/**
 * Takes a letter away as someone else on the console's own subscription would: acknowledges it there
 * (creating the subscription at the earliest message first, as the console does), then waits until
 * the subscription's cursor shows it. False when the letter is not there (already acknowledged).
 */
async function takeAway(kit: PulsarKit, t: TopicName, sub: string, letter: Letter): Promise<boolean> {
  await kit.admin
    .request("PUT", `persistent/${topicPath(t)}/subscription/${encodeURIComponent(sub)}`, "create a subscription", {
      body: { ledgerId: -1, entryId: -1, partitionIndex: -1 },
    })
    .catch((e: unknown) => {
      if (!(e instanceof BrokerError && /exist/i.test(e.message + e.userMessage))) throw e;
    });
  const id = await unackedId(kit, t, sub, letter.id);
  if (id === null) return false;
  const acks = await PulsarSocket.open(
    kit.ep,
    `consumer/persistent/${topicPath(t)}/${encodeURIComponent(sub)}?subscriptionType=Shared&pullMode=true`,
    "acknowledge a test letter",
  );
  try {
    acks.send({ messageId: id });
  } finally {
    await acks.close();
  }
  const end = Date.now() + 15_000;
  while ((await unackedId(kit, t, sub, letter.id)) !== null) {
    if (Date.now() > end) throw new Error(`${shortName(t)}: the acknowledgement of ${letter.id} did not show`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** The write contracts' fixture; the managed header names come from the test, as for the read fixture. */
export const writeContractFixtureWith = (setup: AdapterSetup) => async (): Promise<RedriveContractFixture> => {
  const kit = new PulsarKit();
  await kit.ensureNamespace();
  const config = testConfig({ namespaces: [kit.ns] });
  const adapter = new PulsarAdapter(config, setup);
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
    deadLetterMore: async (dlq, letters) => {
      const s = sources.get(dlq)!;
      await kit.deadLetter(
        s.source,
        s.dlq,
        APP_SUBSCRIPTION,
        letters.map((l) => ({
          body: l.body,
          properties: { ...(l.headers ?? {}), ...(l.messageId ? { "message-id": l.messageId } : {}) },
          key: l.orderingKey ?? null,
        })),
      );
      s.consumed += letters.length;
    },
    takeAway: (dlq, letter) => takeAway(kit, sources.get(dlq)!.dlq, config.subscription, letter),
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
    removesFromDlq: true,
    orderingKeys: true,
    twins: false,
  };
};
