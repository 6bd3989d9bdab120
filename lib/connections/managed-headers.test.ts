// The registry's union of managed header names: every adapter's declaration is in it, and every
// adapter the registry builds refuses a repair of any name in it, its own broker's or another's.
// Adapters are built as the registry builds them (createAdapter); none connects to a broker here.
import { afterAll, describe, expect, it } from "vitest";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { CONSOLE_MANAGED_HEADERS, managedHeaderMatcher, type ManagedHeaders } from "@/lib/brokers/contract/markers";
import { testConfig as kafkaConfig } from "@/lib/brokers/kafka/test-kit";
import { testConfig as pulsarConfig } from "@/lib/brokers/pulsar/test-kit";
import { testConfig as rabbitConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { ELASTICMQ_ENDPOINT, testConfig as sqsConfig } from "@/lib/brokers/sqs/test-kit";
import { isManagedHeader, MANAGED_HEADERS } from "@/lib/connections/managed-headers";
import { createAdapter } from "@/lib/connections/registry";

const adapters: BrokerAdapter[] = [
  createAdapter(rabbitConfig()),
  createAdapter(sqsConfig(ELASTICMQ_ENDPOINT)),
  createAdapter(kafkaConfig()),
  createAdapter(pulsarConfig()),
];
afterAll(() => Promise.all(adapters.map((a) => a.close())));

/** Names a declaration covers: each whole name, and each prefix with something after it, in another case too. */
const namesOf = (d: ManagedHeaders) =>
  [...d.names, ...d.prefixes.map((p) => `${p}original-topic`)].flatMap((n) => [n, n.toUpperCase()]);

const refusal = (a: BrokerAdapter, set: Record<string, string> = {}, remove: string[] = []) =>
  a.repair!.refusal({ operationId: "0b7c1d7e-4a61-4f43-a2a4-8d1a8f0c9e11", setHeaders: set, removeHeaders: remove });

describe("the registry's union of managed header names", () => {
  it("holds every adapter's own declaration and the console's", () => {
    expect(new Set(adapters.map((a) => a.kind))).toEqual(new Set(["rabbitmq", "sqs", "kafka", "pulsar"]));
    for (const a of adapters) expect(MANAGED_HEADERS, a.kind).toContain(a.managedHeaders);
    expect(MANAGED_HEADERS).toContain(CONSOLE_MANAGED_HEADERS);
    expect(MANAGED_HEADERS).toHaveLength(adapters.length + 1);
  });

  it("leaves no broker's names in the contract, and SQS declares none of its own", () => {
    expect(managedHeaderMatcher([CONSOLE_MANAGED_HEADERS])("x-death")).toBe(false);
    expect(managedHeaderMatcher([CONSOLE_MANAGED_HEADERS])("X-DLQ-Redrive-Id")).toBe(true);
    const sqs = adapters.find((a) => a.kind === "sqs")!;
    expect(sqs.managedHeaders.names).toEqual([]);
    expect(sqs.managedHeaders.prefixes).toEqual([]);
  });

  it("every adapter refuses a repair of every other adapter's names, and of the console's, whatever their case", () => {
    for (const owner of [...adapters.map((a) => a.managedHeaders), CONSOLE_MANAGED_HEADERS]) {
      for (const name of namesOf(owner)) {
        expect(isManagedHeader(name), name).toBe(true);
        for (const a of adapters) {
          const why = `${a.kind} on ${name} (${owner.managedBy})`;
          expect(refusal(a, { [name]: "v" }), why).toMatch(/cannot be changed by a repair/);
          expect(refusal(a, {}, [name]), why).toMatch(/cannot be changed by a repair/);
        }
      }
    }
  });

  it("a letter bridged from Kafka into SQS keeps its kafka_dlt-* headers; an ordinary header is left to the repair", () => {
    const sqs = adapters.find((a) => a.kind === "sqs")!;
    expect(refusal(sqs, { "kafka_dlt-original-topic": "orders" })).toMatch(
      /"kafka_dlt-original-topic" is kept by .* cannot be changed by a repair/,
    );
    for (const a of adapters) expect(refusal(a, { "x-tenant": "eu" }), a.kind).toBeNull();
  });
});
