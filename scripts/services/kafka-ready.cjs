// Readiness probe used by scripts/services.sh: exits 0 when the Kafka broker at argv[2] answers a
// metadata request (kafkajs admin listTopics), 1 otherwise. Run from the repository root.
const path = require("node:path");
const { Kafka, logLevel } = require(path.join(process.cwd(), "node_modules", "kafkajs"));

const broker = process.argv[2] || "127.0.0.1:9092";
const kafka = new Kafka({
  clientId: "dlq-console-services-probe",
  brokers: [broker],
  logLevel: logLevel.NOTHING,
  connectionTimeout: 2000,
  requestTimeout: 3000,
  retry: { retries: 0 },
});
const admin = kafka.admin();
(async () => {
  await admin.connect();
  await admin.listTopics();
  const cluster = await admin.describeCluster();
  if (!cluster.brokers.length || cluster.controller == null) throw new Error("no controller yet");
})()
  .then(() => admin.disconnect().then(() => process.exit(0)))
  .catch((error) => {
    if (process.env.PROBE_VERBOSE) console.error(String(error?.message));
    process.exit(1);
  });
