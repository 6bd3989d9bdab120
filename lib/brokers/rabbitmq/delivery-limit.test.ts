import { describe, expect, it } from "vitest";
import { majorVersionOf, queueKindOf, RABBITMQ4_DEFAULT_DELIVERY_LIMIT } from "./discovery";
import type { MgmtQueue } from "./management";
import { readRiskOf } from "./risk";

/**
 * RabbitMQ 4.0 gave quorum queues a delivery limit of 20 when they set none. The decision from the
 * management API's own answers: /api/overview's `rabbitmq_version` and a queue's entry in
 * /api/queues, as 3.10.8 (this machine's broker) and 4.0.x answer them.
 */
const overview310 = { rabbitmq_version: "3.10.8" };
const overview40 = { rabbitmq_version: "4.0.5" };
// Entries as /api/queues returns them (columns name,type,arguments,effective_policy_definition,policy).
const quorumNoLimit = {
  name: "orders.dlq",
  type: "quorum",
  arguments: { "x-queue-type": "quorum" },
  effective_policy_definition: {},
  policy: null,
} as unknown as MgmtQueue;
const quorumOff = {
  ...quorumNoLimit,
  arguments: { "x-queue-type": "quorum", "x-delivery-limit": -1 },
} as unknown as MgmtQueue;
const quorumFive = {
  ...quorumNoLimit,
  arguments: { "x-queue-type": "quorum", "x-delivery-limit": 5 },
} as unknown as MgmtQueue;
const quorumPolicy = {
  ...quorumNoLimit,
  policy: "limits",
  effective_policy_definition: { "delivery-limit": 7 },
} as unknown as MgmtQueue;
const classic = {
  name: "c.dlq",
  type: "classic",
  arguments: {},
  effective_policy_definition: {},
  policy: null,
} as unknown as MgmtQueue;

describe("the delivery limit of a quorum DLQ, by broker version", () => {
  it("reads the major version", () => {
    expect(majorVersionOf(overview310.rabbitmq_version)).toBe(3);
    expect(majorVersionOf(overview40.rabbitmq_version)).toBe(4);
    expect(majorVersionOf(null)).toBeNull();
    expect(majorVersionOf("garbage")).toBeNull();
  });

  it("on 3.x a quorum queue without a limit has none: reading it costs nothing", () => {
    const kind = queueKindOf(quorumNoLimit, overview310.rabbitmq_version);
    expect(kind.deliveryLimit).toBeNull();
    expect(readRiskOf(kind, "orders.dlq")).toBeNull();
  });

  it("on 4.x the same queue has RabbitMQ's default of 20: reading it is a risk, and the warning says where the limit comes from", () => {
    const kind = queueKindOf(quorumNoLimit, overview40.rabbitmq_version);
    expect(kind).toMatchObject({ deliveryLimit: RABBITMQ4_DEFAULT_DELIVERY_LIMIT, defaultLimit: true });
    const risk = readRiskOf(kind, "orders.dlq");
    expect(risk).toMatchObject({ kind: "delivery-limit", limit: 20, nextReadLosesAt: 19 });
    expect(risk!.message).toContain("RabbitMQ 4's default");
  });

  it("an explicit limit wins on either version; -1 turns the default off; a policy's limit counts; classic queues have none", () => {
    for (const v of [overview310, overview40]) {
      expect(queueKindOf(quorumFive, v.rabbitmq_version)).toMatchObject({ deliveryLimit: 5 });
      expect(queueKindOf(quorumFive, v.rabbitmq_version).defaultLimit).toBeUndefined();
      expect(queueKindOf(quorumPolicy, v.rabbitmq_version).deliveryLimit).toBe(7);
      expect(queueKindOf(quorumOff, v.rabbitmq_version).deliveryLimit).toBeNull();
      expect(queueKindOf(classic, v.rabbitmq_version).deliveryLimit).toBeNull();
    }
  });

  it("an unknown version assumes no default (the management API did not say)", () => {
    expect(queueKindOf(quorumNoLimit, null).deliveryLimit).toBeNull();
  });
});
