// Readiness probe used by scripts/services.sh: exits 0 when the Kafka broker at argv[2] answers a
// metadata request (kafkajs admin listTopics), 1 otherwise. Run from the repository root.
const path = require("node:path");
const { Kafka, logLevel } = require(path.join(process.cwd(), "node_modules", "kafkajs"));

// kafkajs 2.2.4 arms a timer with a negative delay after its first answer (the console mends that:
// lib/brokers/kafka/client.ts, checkOnlyWhenPending); this probe lives for a second, so it only
// keeps Node 24's warning about it out of the terminal. Other warnings are printed as before.
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name !== "TimeoutNegativeWarning") console.warn(`${w.name}: ${w.message}`);
});

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
