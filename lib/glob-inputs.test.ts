import { describe, expect, it } from "vitest";
import { ruleInputSchema } from "@/lib/alerts/rules";
import { parseConfig } from "@/lib/config";
import { validateMaskingRules, validateSensitiveDlqs } from "@/lib/masking/types";
import { ownerSchema } from "@/lib/operations/use-cases";

/** Every place an admin writes a glob refuses one beyond the bounds of lib/glob, as an input error in words. */
const STARS = "*a".repeat(40); // 40 stars, 80 characters
const LONG = `orders.${"x".repeat(260)}`;
const TOO_MANY = 'has 40 "*"; a pattern has at most 32';

const rabbit = { kind: "rabbitmq", id: "r", url: "amqp://127.0.0.1:5672", passwordEnv: "P" };
const kafka = { kind: "kafka", id: "k", brokers: ["127.0.0.1:9092"] };
const pulsar = { kind: "pulsar", id: "p", adminUrl: "http://127.0.0.1:8080" };

describe("the config file", () => {
  const cases: Array<[string, unknown, string]> = [
    ["owners.0.queue", { connections: [rabbit], owners: [{ queue: STARS, team: "t", contact: "c" }] }, TOO_MANY],
    [
      "owners.0.connection",
      { connections: [rabbit], owners: [{ connection: STARS, queue: "q", team: "t", contact: "c" }] },
      TOO_MANY,
    ],
    [
      "repair.0.queue",
      { connections: [rabbit], repair: [{ connection: "r", queue: LONG }] },
      "is 267 characters long; a pattern has at most 256",
    ],
    ["repair.0.connection", { connections: [rabbit], repair: [{ connection: STARS, queue: "q" }] }, TOO_MANY],
    ["connections.0.dltPatterns.1", { connections: [{ ...kafka, dltPatterns: ["*.DLT", STARS] }] }, TOO_MANY],
    [
      "connections.0.consumerGroups.exclude.0",
      { connections: [{ ...kafka, consumerGroups: { exclude: [STARS] } }] },
      TOO_MANY,
    ],
    [
      "connections.0.consumerGroups.dlts.0.group",
      { connections: [{ ...kafka, consumerGroups: { dlts: [{ group: STARS, dlt: "x.DLT" }] } }] },
      TOO_MANY,
    ],
    [
      "connections.0.dlqPatterns.0",
      { connections: [{ ...pulsar, dlqPatterns: [LONG] }] },
      "is 267 characters long; a pattern has at most 256",
    ],
  ];
  it.each(cases)("refuses a hostile glob at %s, naming the path", (path, config, words) => {
    expect(() => parseConfig(JSON.stringify(config), "dlq-console.config.json")).toThrow(
      `dlq-console.config.json is invalid: ${path}: this pattern ${words}`,
    );
  });

  it("still takes the usual patterns", () => {
    const c = parseConfig(
      JSON.stringify({
        connections: [{ ...kafka, dltPatterns: ["*.DLT", "dlq.*", "team-?-*.dlq"] }],
        owners: [{ connection: "k*", queue: "orders.*", team: "t", contact: "c" }],
        repair: [{ connection: "*", queue: "*" }],
      }),
    );
    expect(c.owners[0].queue).toBe("orders.*");
  });
});

describe("masking rules and sensitive DLQs", () => {
  const rule = (target: unknown) => ({ id: "r1", target, action: { kind: "hide" }, roles: ["viewer"] });
  it("refuses a header glob, a field path and a sensitive-DLQ pattern with too many stars", () => {
    expect(() => validateMaskingRules([rule({ kind: "header", names: ["x-*", STARS] })])).toThrow(
      `Rule "r1": target.names.1: this pattern ${TOO_MANY}`,
    );
    expect(() => validateMaskingRules([rule({ kind: "field", paths: [STARS.replace(/a/g, "a.")] })])).toThrow(
      'target.paths.0: this pattern has 40 "*"',
    );
    expect(() => validateSensitiveDlqs([{ connectionId: "*", pattern: STARS }])).toThrow(
      `Sensitive DLQ 1: pattern: this pattern ${TOO_MANY}`,
    );
    expect(validateMaskingRules([rule({ kind: "header", names: ["*token*", "x-?-secret"] })])).toHaveLength(1);
  });
});

describe("alert rules and owners written in the console", () => {
  it("an alert's DLQ name pattern", () => {
    const input = { name: "n", kind: "depth_above", params: {}, webhookUrl: "https://example.com/h" };
    const r = ruleInputSchema.safeParse({ ...input, queuePattern: STARS });
    expect(r.error?.issues.map((i) => i.message)).toEqual([`DLQ name pattern ${TOO_MANY}`]);
    expect(ruleInputSchema.safeParse({ ...input, queuePattern: "orders.*" }).success).toBe(true);
    expect(ruleInputSchema.safeParse({ ...input, queuePattern: null }).success).toBe(true);
  });

  it("an owner's DLQ and connection patterns", () => {
    const input = { queuePattern: "orders.*", team: "t", contact: "c" };
    expect(ownerSchema.safeParse({ ...input, queuePattern: STARS }).error?.issues.map((i) => i.message)).toEqual([
      `The DLQ name pattern ${TOO_MANY}`,
    ]);
    expect(ownerSchema.safeParse({ ...input, connectionPattern: STARS }).error?.issues.map((i) => i.message)).toEqual([
      `The connection pattern ${TOO_MANY}`,
    ]);
    expect(ownerSchema.safeParse({ ...input, connectionPattern: "" }).data?.connectionPattern).toBeNull();
  });
});
