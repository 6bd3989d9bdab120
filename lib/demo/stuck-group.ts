/**
 * The demo's consumer group stuck behind one poison record (seeded by lib/demo/kafka.ts):
 * its topic, group, and the stuck partition and offset. No imports: the access matrix (test/) and
 * Playwright read it without loading a Kafka client.
 */
export const KAFKA_STUCK_DEMO = {
  topic: "demo.payments",
  group: "demo.payments-service",
  partition: 1,
  offset: 2,
} as const;
