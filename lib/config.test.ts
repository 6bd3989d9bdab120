import { describe, expect, it } from "vitest";
import { vhostOf } from "./brokers/rabbitmq/connection";
import { defaultConfig, parseConfig, secretFromEnv } from "./config";

const DEFAULT_CONFIG = defaultConfig({});

const valid = {
  connections: [
    {
      kind: "rabbitmq",
      id: "prod-rabbit",
      url: "amqp://rabbit.internal:5672/vh",
      passwordEnv: "P",
      dlqs: [{ name: "orders.dlq", origin: "orders" }],
    },
  ],
};

describe("parseConfig", () => {
  it("accepts a valid file and fills defaults", () => {
    const c = parseConfig(JSON.stringify(valid));
    expect(c.connections[0]).toMatchObject({
      id: "prod-rabbit",
      discover: true,
      dlqs: [{ name: "orders.dlq", origin: "orders" }],
    });
  });

  it("names the offending path in its error", () => {
    const bad = { connections: [{ ...valid.connections[0], id: "Bad Id" }] };
    expect(() => parseConfig(JSON.stringify(bad), "x.json")).toThrow(/x\.json is invalid: connections\.0\.id/);
  });

  it("rejects invalid JSON with the parser's reason", () => {
    expect(() => parseConfig("{ nope", "x.json")).toThrow(/x\.json is not valid JSON/);
  });

  it("rejects duplicate connection ids", () => {
    const dup = { connections: [valid.connections[0], valid.connections[0]] };
    expect(() => parseConfig(JSON.stringify(dup))).toThrow(/appears twice/);
  });

  it("rejects an unknown broker kind", () => {
    expect(() => parseConfig(JSON.stringify({ connections: [{ ...valid.connections[0], kind: "mqtt" }] }))).toThrow(
      /invalid/,
    );
  });

  it("points the default SQS connection at SQS_ENDPOINT when it is set, where the demo seeder seeds", () => {
    const moved = defaultConfig({ SQS_ENDPOINT: "http://127.0.0.1:9326" });
    expect(moved.connections.find((c) => c.id === "local-sqs")).toMatchObject({ endpoint: "http://127.0.0.1:9326" });
    expect(moved.connections.filter((c) => c.id !== "local-sqs")).toEqual(
      DEFAULT_CONFIG.connections.filter((c) => c.id !== "local-sqs"),
    );
    expect(defaultConfig({ SQS_ENDPOINT: "" }).connections[1]).toMatchObject({ endpoint: "http://127.0.0.1:9324" });
  });

  it("moves the default RabbitMQ connection to RABBITMQ_VHOST when it is set, on the same node", () => {
    const rabbitOf = (env: Record<string, string>) =>
      defaultConfig(env).connections.find((c) => c.id === "local-rabbitmq") as { url: string };
    expect(vhostOf(rabbitOf({}).url)).toBe("/");
    expect(vhostOf(rabbitOf({ RABBITMQ_VHOST: "/" }).url)).toBe("/");
    expect(rabbitOf({ RABBITMQ_VHOST: "dlq-tests" }).url).toBe("amqp://127.0.0.1:5672/dlq-tests");
    expect(vhostOf(rabbitOf({ RABBITMQ_VHOST: "team a/prod" }).url)).toBe("team a/prod");
    const moved = defaultConfig({ RABBITMQ_VHOST: "dlq-tests" });
    expect(moved.connections.filter((c) => c.id !== "local-rabbitmq")).toEqual(
      DEFAULT_CONFIG.connections.filter((c) => c.id !== "local-rabbitmq"),
    );
  });

  it("defaults to the local brokers that scripts/start.sh runs, with schema defaults filled", () => {
    expect(DEFAULT_CONFIG.connections.map((c) => c.kind)).toEqual(["rabbitmq", "sqs", "kafka", "pulsar"]);
    expect(DEFAULT_CONFIG.connections[0]).toMatchObject({
      kind: "rabbitmq",
      url: "amqp://127.0.0.1:5672",
      discover: true,
      dlqs: [],
    });
    expect(DEFAULT_CONFIG.connections[1]).toMatchObject({ kind: "sqs", endpoint: "http://127.0.0.1:9324" });
    expect(DEFAULT_CONFIG.connections[2]).toMatchObject({
      kind: "kafka",
      brokers: ["127.0.0.1:9092"],
      dltPatterns: expect.arrayContaining(["*.DLT"]),
    });
    expect(DEFAULT_CONFIG.connections[3]).toMatchObject({
      kind: "pulsar",
      adminUrl: "http://127.0.0.1:8080",
      dlqPatterns: ["*-DLQ"],
      subscription: "dlq-console",
      createSubscription: true,
    });
  });
});

describe("repair switch", () => {
  it("is off by default: no DLQ may be repaired unless the file names it", () => {
    expect(parseConfig(JSON.stringify(valid)).repair).toEqual([]);
    expect(DEFAULT_CONFIG.repair).toEqual([]);
  });

  it("accepts connection and queue globs", () => {
    const c = parseConfig(JSON.stringify({ ...valid, repair: [{ connection: "prod-*", queue: "orders.*" }] }));
    expect(c.repair).toEqual([{ connection: "prod-*", queue: "orders.*" }]);
  });

  it("refuses an entry without a queue pattern, naming the path", () => {
    expect(() => parseConfig(JSON.stringify({ ...valid, repair: [{ connection: "prod-rabbit" }] }), "x.json")).toThrow(
      /x\.json is invalid: repair\.0\.queue/,
    );
  });
});

describe("secretFromEnv", () => {
  it("reads the named variable and falls back when it is unset or empty", () => {
    process.env.DLQ_TEST_SECRET = "s3cret";
    expect(secretFromEnv("DLQ_TEST_SECRET", "guest")).toBe("s3cret");
    process.env.DLQ_TEST_SECRET = "";
    expect(secretFromEnv("DLQ_TEST_SECRET", "guest")).toBe("guest");
    expect(secretFromEnv(undefined, "guest")).toBe("guest");
    delete process.env.DLQ_TEST_SECRET;
  });
});
