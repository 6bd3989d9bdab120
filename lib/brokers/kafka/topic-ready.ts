import type { Admin, ITopicConfig } from "kafkajs";

/** Either answer means the broker has not finished taking a just-created topic in. */
const NOT_YET = new Set(["UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE"]);

/**
 * Waits until every partition of a topic created a moment ago has a leader.
 *
 * kafkajs's own `createTopics({ waitForLeaders: true })` retries only LEADER_NOT_AVAILABLE; a
 * broker whose metadata has not caught up with the creation answers UNKNOWN_TOPIC_OR_PARTITION
 * and that wait throws, as if the topic did not exist. Create with `waitForLeaders: false` and
 * call this instead. Resolves true when ready, false when the budget ran out first.
 */
export async function topicHasLeaders(
  admin: Pick<Admin, "fetchTopicMetadata">,
  topic: string,
  partitions: number,
  budgetMs = 30_000,
): Promise<boolean> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const led = topics.find((t) => t.name === topic)?.partitions.filter((p) => p.leader >= 0).length ?? 0;
      if (led >= partitions) return true;
    } catch (error) {
      if (!NOT_YET.has((error as { type?: string }).type ?? "")) throw error;
    }
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Creates a topic and waits until every partition has a leader (see `topicHasLeaders`); throws
 * when the broker has not led them all within `budgetMs`. True when this call created it.
 */
export async function createTopicWithLeaders(
  admin: Pick<Admin, "createTopics" | "fetchTopicMetadata">,
  topic: ITopicConfig & { numPartitions: number },
  budgetMs = 30_000,
): Promise<boolean> {
  const created = await admin.createTopics({ waitForLeaders: false, topics: [topic] });
  if (!(await topicHasLeaders(admin, topic.topic, topic.numPartitions, budgetMs)))
    throw new Error(
      `topic ${topic.topic}: not all ${topic.numPartitions} partitions have a leader after ${budgetMs} ms`,
    );
  return created;
}
