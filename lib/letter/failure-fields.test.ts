import { describe, expect, it } from "vitest";
import type { FailureInfo } from "@/lib/brokers/contract/letter";
import { fieldsInUse, filledFields } from "./failure-fields";

const empty: FailureInfo = {
  deadLetteredAt: null,
  reason: null,
  originQueue: null,
  exchange: null,
  routingKeys: [],
  count: null,
  deliveryCount: null,
  exceptionClass: null,
  exceptionMessage: null,
  stackTrace: null,
};

describe("failure fields", () => {
  it("reports nothing for an empty failure", () => {
    expect([...filledFields(empty)]).toEqual([]);
  });
  it("counts the default exchange and a zero count as facts", () => {
    expect([...filledFields({ ...empty, exchange: "", count: 0 })].sort()).toEqual(["count", "exchange"]);
  });
  it("unions fields over a page", () => {
    const sqsLike = { ...empty, reason: "maxReceiveCount", originQueue: "orders", count: 3 };
    const withException = { ...empty, exceptionClass: "java.lang.IllegalStateException" };
    const used = fieldsInUse([sqsLike, withException]);
    expect(used.has("exchange")).toBe(false);
    expect(used.has("routingKeys")).toBe(false);
    expect(used.has("deliveryCount")).toBe(false);
    expect([...used].sort()).toEqual(["count", "exceptionClass", "origin", "reason"]);
  });
});
