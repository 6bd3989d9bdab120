import type { ITopicConfig } from "kafkajs";
import { describe, expect, it } from "vitest";
import { createTopicWithLeaders, topicHasLeaders } from "./topic-ready";

/**
 * A broker in the moment after a create: metadata answers UNKNOWN_TOPIC_OR_PARTITION for the
 * first `lagging` asks, then a topic whose partitions get their leaders one ask at a time. Its
 * `createTopics` behaves as kafkajs's does when asked to wait for leaders: it asks once and
 * throws the broker's answer (the failure CI saw).
 */
function brokerCatchingUp(lagging: number) {
  let asks = 0;
  const calls: { waitForLeaders?: boolean; topics: ITopicConfig[] }[] = [];
  const unknown = () =>
    Object.assign(new Error("This server does not host this topic-partition"), {
      type: "UNKNOWN_TOPIC_OR_PARTITION",
    });
  const admin = {
    async fetchTopicMetadata({ topics }: { topics: string[] }) {
      asks += 1;
      if (asks <= lagging) throw unknown();
      const led = asks - lagging;
      return {
        topics: topics.map((name) => ({
          name,
          partitions: [0, 1, 2].map((id) => ({ partitionId: id, leader: id < led ? 1 : -1 })),
        })),
      };
    },
    async createTopics(options: { waitForLeaders?: boolean; topics: ITopicConfig[] }) {
      calls.push(options);
      if (options.waitForLeaders !== false) await admin.fetchTopicMetadata({ topics: [options.topics[0].topic] });
      return true;
    },
  };
  return { admin, calls, asks: () => asks };
}

describe("a topic created a moment ago", () => {
  it("is ready once every partition has a leader, though the broker first says it does not exist", async () => {
    const broker = brokerCatchingUp(3);
    await expect(
      createTopicWithLeaders(broker.admin as never, { topic: "orders.DLT", numPartitions: 3 }, 5_000),
    ).resolves.toBe(true);
    expect(broker.calls).toEqual([{ waitForLeaders: false, topics: [{ topic: "orders.DLT", numPartitions: 3 }] }]);
    expect(broker.asks()).toBe(6);
  });

  it("says not ready, rather than missing, when the budget runs out first", async () => {
    const broker = brokerCatchingUp(1_000);
    await expect(topicHasLeaders(broker.admin as never, "orders.DLT", 3, 250)).resolves.toBe(false);
  });

  it("passes any other broker error on", async () => {
    const admin = {
      fetchTopicMetadata: async () => {
        throw Object.assign(new Error("not authorized"), { type: "TOPIC_AUTHORIZATION_FAILED" });
      },
    };
    await expect(topicHasLeaders(admin as never, "orders.DLT", 3, 250)).rejects.toThrow("not authorized");
  });
});
