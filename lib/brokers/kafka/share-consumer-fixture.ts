/**
 * Test fixture: real share-group dead letters, made by the broker. Kafka's own tools from the same
 * jars the local broker runs (.cache/services/kafka/lib): ConfigCommand gives a share group its DLQ
 * topic (KIP-1191 group configs), and ConsoleShareConsumer reads records in that share group and
 * rejects every one it reads, so the broker archives them and writes them to the DLQ topic. Each
 * Java process has a deadline and is killed (its whole process group) when it passes it. Never
 * used by the app.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import * as path from "node:path";

const ROOT = process.cwd();
const LIB = path.join(process.env.DLQ_SERVICES_CACHE ?? path.join(ROOT, ".cache/services"), "kafka/lib");
const LOG4J = path.join(ROOT, "scripts/services/kafka/log4j2.xml");
const JAVA = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, "bin/java") : "java";

/** Runs one of Kafka's tools; resolves with its output when it exits 0, rejects otherwise or at the deadline. */
export function runKafkaTool(
  mainClass: string,
  args: string[],
  timeoutMs = 30_000,
): Promise<{ stdout: string; stderr: string }> {
  if (!existsSync(LIB))
    return Promise.reject(
      new Error(
        `Kafka's jars are not in ${LIB}: run \`bash scripts/services.sh start kafka\` from this checkout (it fetches them even when a broker already runs).`,
      ),
    );
  return new Promise((resolve, reject) => {
    const child = spawn(
      JAVA,
      [
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        `-Dlog4j2.configurationFile=${LOG4J}`,
        "-cp",
        `${LIB}/*`,
        mainClass,
        ...args,
      ],
      { detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      kill();
      reject(new Error(`${mainClass} did not finish within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new Error(`${mainClass} exited with ${code}\n${stdout}\n${stderr}`));
    });
  });
}

/** Gives a share group its dead-letter topic (and reads from the earliest offset). */
export async function configureShareGroupDlq(
  bootstrap: string,
  group: string,
  opts: { dlqTopic: string; copyRecord?: boolean; deliveryCountLimit?: number },
) {
  const configs = [
    `errors.deadletterqueue.topic.name=${opts.dlqTopic}`,
    `errors.deadletterqueue.copy.record.enable=${opts.copyRecord ? "true" : "false"}`,
    "share.auto.offset.reset=earliest",
    ...(opts.deliveryCountLimit ? [`share.delivery.count.limit=${opts.deliveryCountLimit}`] : []),
  ];
  await runKafkaTool("org.apache.kafka.tools.ConfigCommand", [
    "--bootstrap-server",
    bootstrap,
    "--entity-type",
    "groups",
    "--entity-name",
    group,
    "--alter",
    "--add-config",
    configs.join(","),
  ]);
}

/**
 * A real share consumer in `group` that rejects (or releases, so they are delivered again) the first
 * `count` records it reads from `topic`, then exits. A released record comes back until the
 * group's `share.delivery.count.limit`, then the broker dead-letters it: count the deliveries.
 */
export async function rejectWithShareConsumer(
  bootstrap: string,
  topic: string,
  group: string,
  count: number,
  opts: { release?: boolean; timeoutMs?: number } = {},
) {
  return runKafkaTool(
    "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
    [
      "--bootstrap-server",
      bootstrap,
      "--topic",
      topic,
      "--group",
      group,
      opts.release ? "--release" : "--reject",
      "--max-messages",
      String(count),
    ],
    opts.timeoutMs ?? 30_000,
  );
}
