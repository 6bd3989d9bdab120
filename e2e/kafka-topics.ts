import type { Kafka } from "kafkajs";
import { createTopicWithLeaders } from "../lib/brokers/kafka/topic-ready";

/** A topic of the test's own, ready to produce to: created, and every partition led. */
export async function createTopic(kafka: Kafka, topic: string, numPartitions = 1): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicWithLeaders(admin, { topic, numPartitions });
  } finally {
    await admin.disconnect();
  }
}
