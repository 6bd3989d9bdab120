import "server-only";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { AppError } from "@/lib/errors";
import { checkGlob } from "@/lib/glob";
import { processState } from "@/lib/process-state";

/**
 * Broker connections come from a JSON file (DLQ_CONSOLE_CONFIG, default ./dlq-console.config.json).
 * Secrets never live in the file: a connection names the environment variables that hold them.
 * Without a file, defaultConfig() is used: the four local brokers, RabbitMQ (amqp://127.0.0.1:5672 and
 * its management API on :15672; guest/guest unless RABBITMQ_USERNAME/RABBITMQ_PASSWORD are set), SQS
 * (ElasticMQ, http://127.0.0.1:9324, or SQS_ENDPOINT), Kafka (127.0.0.1:9092) and Pulsar (admin API
 * http://127.0.0.1:8080).
 */
const dlqEntrySchema = z.object({
  /** Queue (or topic) name. */
  name: z.string().min(1),
  /** Where its letters came from, when the broker cannot tell. */
  origin: z.string().min(1).optional(),
  /** Declared queue type, used when the broker cannot be asked (e.g. no management API). */
  queueType: z.enum(["classic", "quorum", "stream"]).optional(),
  /** Declared delivery limit of a quorum queue. */
  deliveryLimit: z.number().int().positive().optional(),
  /** The letters' order matters (Kafka: a DLT with fewer partitions than its origin is then a finding). */
  ordered: z.boolean().optional(),
});

/** A glob an admin writes (`*` any run of characters, `?` one), bounded so it stays cheap to match (lib/glob). */
const globSchema = z.string().min(1).superRefine(checkGlob());

const rabbitConnectionSchema = z.object({
  kind: z.literal("rabbitmq"),
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes"),
  name: z.string().min(1).optional(),
  /** amqp(s)://host:port/vhost without credentials. */
  url: z.string().url(),
  usernameEnv: z.string().optional(),
  passwordEnv: z.string().optional(),
  management: z
    .object({
      /** http(s)://host:15672 */
      url: z.string().url(),
      usernameEnv: z.string().optional(),
      passwordEnv: z.string().optional(),
    })
    .optional(),
  /** Discover DLQs through the management API (queues named as dead-letter targets). Default true. */
  discover: z.boolean().default(true),
  dlqs: z.array(dlqEntrySchema).default([]),
  /** Move to safety puts a DLQ's letters into the classic queue named the DLQ's name + this. Default ".safe". */
  safeQueueSuffix: z.string().min(1).max(64).optional(),
});

const sqsConnectionSchema = z.object({
  kind: z.literal("sqs"),
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes"),
  name: z.string().min(1).optional(),
  region: z.string().min(1),
  /** For emulators or VPC endpoints, e.g. http://127.0.0.1:9324. Omit for AWS. */
  endpoint: z.string().url().optional(),
  /**
   * Credentials come from the standard AWS provider chain (env, shared profile, instance role).
   * For emulators, name env vars holding static keys instead.
   */
  accessKeyIdEnv: z.string().optional(),
  secretAccessKeyEnv: z.string().optional(),
  /** Only queues whose name starts with this are considered (ListQueues prefix). */
  queueNamePrefix: z.string().optional(),
  discover: z.boolean().default(true),
  dlqs: z.array(dlqEntrySchema).default([]),
  /** Seconds a console read hides letters before releasing them (they are released at once when the read ends). */
  readVisibilityTimeoutSeconds: z.number().int().min(5).max(600).default(30),
  /** The server supports StartMessageMoveTask (AWS and ElasticMQ do; moto does not). */
  messageMoveTasks: z.boolean().default(true),
  /** Largest message the server accepts (default: 1 MiB on AWS, 256 KiB with a custom endpoint). */
  maxMessageBytes: z.number().int().positive().optional(),
});

/**
 * A Kafka connection's consumer groups: the operations sampler reads every group's committed and
 * end offsets each round; a partition whose committed offset has not moved for `stuckAfterSeconds`
 * while it has lag is flagged stuck. An admin may move the records it is stuck on to a DLT.
 */
const consumerGroupsSchema = z.object({
  /** Sample this connection's consumer groups (lag, stuck partitions). */
  sample: z.boolean().default(true),
  /** A partition with lag whose committed offset has not moved for this long is stuck. */
  stuckAfterSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 86400)
    .default(300),
  /** Group ids (globs) the console leaves out, e.g. its own or tooling groups. */
  exclude: z.array(globSchema).default([]),
  /**
   * The DLT a group's skipped records go to: the first entry whose `group` glob matches; `{topic}`
   * in `dlt` is the record's topic. Default for every group: "{topic}.DLT".
   */
  dlts: z.array(z.object({ group: globSchema, dlt: z.string().min(1).max(249) })).default([]),
  /** Create a missing DLT (with the source topic's partition count) when records are skipped to it. */
  createDlt: z.boolean().default(false),
});

const kafkaConnectionSchema = z.object({
  kind: z.literal("kafka"),
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes"),
  name: z.string().min(1).optional(),
  brokers: z.array(z.string().min(1)).min(1),
  clientId: z.string().default("dlq-console"),
  ssl: z.boolean().default(false),
  sasl: z
    .object({
      mechanism: z.enum(["plain", "scram-sha-256", "scram-sha-512"]),
      usernameEnv: z.string(),
      passwordEnv: z.string(),
    })
    .optional(),
  /** Glob patterns of dead-letter topic names. */
  dltPatterns: z.array(globSchema).default(["*.DLT", "*-dlt", "*.dlq", "dlq.*", "*-dead-letter"]),
  discover: z.boolean().default(true),
  /**
   * With `discover`: also the DLQ topics share groups name in their configuration
   * (`errors.deadletterqueue.topic.name`, Kafka 4.4+), whatever the patterns; read at most every 30 s.
   */
  shareGroupDlqs: z.boolean().default(true),
  dlqs: z.array(dlqEntrySchema).default([]),
  /** Consumer groups: sampled for lag, and a stuck partition's records moved to a DLT. */
  consumerGroups: consumerGroupsSchema.prefault({}),
});

/**
 * An Apache Pulsar cluster, reached through its admin REST API and its WebSocket API (both served
 * on the broker's web service port; the binary protocol needs a native client library). DLQ topics
 * are `tenant/namespace/topic` names; the console keeps a durable subscription of its own on each
 * one: its backlog is the DLQ's depth, and acknowledging a letter on it is how a letter leaves.
 */
const pulsarConnectionSchema = z.object({
  kind: z.literal("pulsar"),
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes"),
  name: z.string().min(1).optional(),
  /** The admin REST API, http(s)://host:8080 (the broker's or a proxy's web service). */
  adminUrl: z.string().url(),
  /** The WebSocket service, ws(s)://host:8080. Default: `adminUrl` with ws(s) for http(s). */
  serviceUrl: z.string().url().optional(),
  /** Token authentication: the environment variable holding the JWT (sent as a Bearer token). */
  tokenEnv: z.string().optional(),
  /** Namespaces ("tenant/namespace") whose topics discovery looks at. Default: every namespace of every tenant but `pulsar`. */
  namespaces: z.array(z.string().regex(/^[^/\s]+\/[^/\s]+$/, "tenant/namespace")).optional(),
  /** Glob patterns of dead-letter topic names (the topic part). Default: the client's `<topic>-<subscription>-DLQ`. */
  dlqPatterns: z.array(globSchema).default(["*-DLQ"]),
  discover: z.boolean().default(true),
  /** Topics named here ("tenant/namespace/topic") are DLQs whatever their name. */
  dlqs: z.array(dlqEntrySchema).default([]),
  /** The console's own subscription on each DLQ topic. */
  subscription: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/)
    .default("dlq-console"),
  /** Create the console's subscription (from the earliest letter still stored) on a DLQ topic that lacks it. */
  createSubscription: z.boolean().default(true),
  /** The consumers' maxRedeliverCount, when known: Pulsar does not put the redelivery count on a dead letter. */
  maxRedeliverCount: z.number().int().min(0).optional(),
  /** Seconds to wait for any one answer from Pulsar. */
  timeoutSeconds: z.number().int().min(1).max(300).default(15),
});

export const connectionSchema = z.discriminatedUnion("kind", [
  rabbitConnectionSchema,
  sqsConnectionSchema,
  kafkaConnectionSchema,
  pulsarConnectionSchema,
]);
/** Who owns which DLQs: the first entry that matches a DLQ names its team (shown with the DLQ, used by alerts). */
const ownerSchema = z.object({
  /** Connection id, or a glob over ids; absent: every connection. */
  connection: globSchema.optional(),
  /** DLQ name glob, e.g. "orders.*" (`*` any run of characters, `?` one). */
  queue: globSchema,
  team: z.string().trim().min(1).max(100),
  /** How to reach the team: an address, a channel, a URL. Shown as text. */
  contact: z.string().trim().min(1).max(300),
});

/**
 * Where repair and resubmit is allowed: a DLQ may be repaired only when some entry
 * matches its connection and name. Off by default (no entries): editing a letter before sending it
 * on is the most dangerous thing the console does, so an operator of the console opts in per
 * connection or DLQ pattern. The permission (letter:repair, admins) is checked as well.
 */
const repairScopeSchema = z.object({
  /** Connection id, or a glob over ids (`*` any run of characters, `?` one). */
  connection: globSchema,
  /** DLQ name glob, e.g. "orders.*" or "*" for every DLQ of the connection. */
  queue: globSchema,
});

/** The operations sampler, configuration checks and alerts. Every field has a default. */
const operationsSchema = z.object({
  /** Seconds between sampling rounds. */
  sampleIntervalSeconds: z.number().int().min(5).max(3600).default(30),
  /** Days of DLQ samples kept (the week chart needs 7). */
  sampleRetentionDays: z.number().int().min(1).max(400).default(14),
  /** A Kafka DLT keeping letters for less than this many days is a finding. */
  kafkaMinRetentionDays: z.number().min(0).default(7),
  /** "Lost in" is shown as urgent below this many hours. */
  deadlineWarnHours: z.number().positive().default(24),
  /**
   * Hosts an admin allows as alert webhook targets besides public https ones (for example an
   * internal relay, or plain http on a private network). Entries are host names or host:port.
   */
  webhookAllowedHosts: z.array(z.string().trim().min(1)).default([]),
});

/**
 * The triage indexer (lib/triage/indexer.ts): where reading costs nothing, the worker keeps a DLQ's
 * groups current on its own. Every field has a default: on.
 */
const indexingSchema = z.object({
  enabled: z.boolean().default(true),
  /** Seconds between the indexer's rounds (a Kafka or Pulsar DLQ with new letters is read each round). */
  roundSeconds: z.number().int().min(1).max(600).default(5),
  /** A DLQ that can only be read whole (RabbitMQ classic, SQS) is rescanned at most this often, and only after the sampler saw it change. */
  intervalSeconds: z.number().int().min(10).max(86400).default(300),
  /** Letters the rescans of one connection may read per minute; a DLQ deeper than this is not rescanned on its own. */
  lettersPerMinutePerConnection: z.number().int().min(1).default(20_000),
  /** At most this many letters per DLQ in one round of a Kafka or Pulsar DLQ (the rest next round). */
  maxLettersPerRound: z.number().int().min(100).default(100_000),
  /** Where the console never indexes on its own: a connection id (or glob) and a DLQ name glob. */
  disabled: z.array(z.object({ connection: globSchema, dlqPattern: globSchema })).default([]),
});

/** Triage settings. */
const triageSchema = z.object({
  indexing: indexingSchema.prefault({}),
});

export const consoleConfigSchema = z.object({
  connections: z.array(connectionSchema).min(1),
  owners: z.array(ownerSchema).default([]),
  operations: operationsSchema.prefault({}),
  /** DLQs whose letters may be repaired and resubmitted (see repairScopeSchema). Default: none. */
  repair: z.array(repairScopeSchema).default([]),
  triage: triageSchema.prefault({}),
});

export type RabbitConnectionConfig = z.infer<typeof rabbitConnectionSchema>;
export type SqsConnectionConfig = z.infer<typeof sqsConnectionSchema>;
export type KafkaConnectionConfig = z.infer<typeof kafkaConnectionSchema>;
export type PulsarConnectionConfig = z.infer<typeof pulsarConnectionSchema>;
export type DlqEntryConfig = z.infer<typeof dlqEntrySchema>;
export type ConnectionConfig = z.infer<typeof connectionSchema>;
export type ConsumerGroupsConfig = z.infer<typeof consumerGroupsSchema>;
export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;
export type OwnerConfig = z.infer<typeof ownerSchema>;
export type OperationsConfig = z.infer<typeof operationsSchema>;
export type RepairScopeConfig = z.infer<typeof repairScopeSchema>;
export type IndexingConfig = z.infer<typeof indexingSchema>;

/** An AMQP URL's path for `vhost`: none for the default vhost `/` (or none given); the inverse of lib/brokers/rabbitmq/connection.ts's vhostOf. */
export const vhostPath = (vhost: string | undefined): string =>
  !vhost || vhost === "/" ? "" : `/${encodeURIComponent(vhost)}`;

/**
 * Without a config file: the local brokers that scripts/start.sh runs (RabbitMQ, ElasticMQ on
 * :9324, Kafka on :9092, Pulsar on :8080). One that is not running shows as unreachable; the others work.
 * SQS_ENDPOINT, where the demo seeder (scripts/seed-demo.ts) puts its SQS letters, moves the SQS
 * connection there too (the tests keep an ElasticMQ of their own on another port: docs/testing.md).
 * RABBITMQ_VHOST moves the RabbitMQ connection to that vhost of the same node (the integration tests
 * keep one of their own, so that consoles on the defaults beside them never read their queues).
 */
export const defaultConfig = (env: Readonly<Record<string, string | undefined>> = process.env): ConsoleConfig =>
  consoleConfigSchema.parse({
    connections: [
      {
        kind: "rabbitmq",
        id: "local-rabbitmq",
        name: "Local RabbitMQ",
        url: `amqp://127.0.0.1:5672${vhostPath(env.RABBITMQ_VHOST)}`,
        usernameEnv: "RABBITMQ_USERNAME",
        passwordEnv: "RABBITMQ_PASSWORD",
        management: {
          url: "http://127.0.0.1:15672",
          usernameEnv: "RABBITMQ_USERNAME",
          passwordEnv: "RABBITMQ_PASSWORD",
        },
      },
      {
        kind: "sqs",
        id: "local-sqs",
        name: "Local SQS (ElasticMQ)",
        region: "us-east-1",
        endpoint: env.SQS_ENDPOINT || "http://127.0.0.1:9324",
        accessKeyIdEnv: "SQS_ACCESS_KEY_ID",
        secretAccessKeyEnv: "SQS_SECRET_ACCESS_KEY",
      },
      // The local demo broker: a skipped record's DLT is created when missing (the demo's payments group has none yet).
      {
        kind: "kafka",
        id: "local-kafka",
        name: "Local Kafka",
        brokers: ["127.0.0.1:9092"],
        consumerGroups: { createDlt: true },
      },
      { kind: "pulsar", id: "local-pulsar", name: "Local Pulsar", adminUrl: "http://127.0.0.1:8080" },
    ],
  });

/** Parses config text; errors name the offending path so an operator can fix the file. */
export function parseConfig(text: string, source = "config"): ConsoleConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new AppError("bad_request:config", { userMessage: `${source} is not valid JSON: ${(e as Error).message}` });
  }
  const parsed = consoleConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new AppError("bad_request:config", { userMessage: `${source} is invalid: ${issues}` });
  }
  const ids = new Set<string>();
  for (const c of parsed.data.connections) {
    if (ids.has(c.id))
      throw new AppError("bad_request:config", { userMessage: `${source}: connection id "${c.id}" appears twice` });
    ids.add(c.id);
  }
  return parsed.data;
}

const configCache = processState("config", () => ({ config: null as ConsoleConfig | null }));

export function loadConfig(): ConsoleConfig {
  if (configCache.config) return configCache.config;
  const file = path.resolve(process.env.DLQ_CONSOLE_CONFIG ?? "dlq-console.config.json");
  configCache.config = existsSync(file) ? parseConfig(readFileSync(file, "utf8"), file) : defaultConfig();
  return configCache.config;
}

/** Reads a secret named by config; defaults apply only to the local development broker. */
export function secretFromEnv(name: string | undefined, fallback?: string): string | undefined {
  if (!name) return fallback;
  const v = process.env[name];
  return v === undefined || v === "" ? fallback : v;
}

/** For tests: forget the cached config. */
export function resetConfigCache() {
  configCache.config = null;
}

/**
 * DLQ_TRUSTED_PROXIES: the reverse proxies / load balancers allowed to tell the console who the
 * client is (X-Forwarded-For, X-Real-IP) and which request id to record (X-Request-Id). A comma- or
 * space-separated list of addresses and CIDR ranges, e.g. "10.0.0.0/8, 192.168.1.5, fd00::/8".
 * Default none: the audit log and the sign-in limiter use the socket's peer address and a
 * server-made request id. Entries are parsed (and bad ones reported) by lib/auth/client-ip.ts.
 */
export function trustedProxyEntries(env: Record<string, string | undefined> = process.env): string[] {
  return (env.DLQ_TRUSTED_PROXIES ?? "").split(/[\s,]+/).filter(Boolean);
}

/** A connection's consumer-group settings where its broker has consumer groups (Kafka), else null. */
export function consumerGroupsConfigOf(c: ConnectionConfig | undefined): ConsumerGroupsConfig | null {
  return c && "consumerGroups" in c ? c.consumerGroups : null;
}
