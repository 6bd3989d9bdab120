import { describe, expect, it } from "vitest";
import { DEFAULT_MASKING_RULES } from "@/lib/masking/defaults";
import type { MaskingRule } from "@/lib/masking/types";
import { compareProtection, destinationsOf } from "./target-protection";

const config = (sensitive: string[], rules: MaskingRule[] = DEFAULT_MASKING_RULES) => ({
  rules,
  sensitive: sensitive.map((pattern) => ({ connectionId: "c", pattern })),
});
const to = (queue: string) => [{ kind: "target" as const, queue }];

describe("a redrive destination is at least as protected as its DLQ", () => {
  it("a sensitive DLQ into an unmarked queue: viewers would see payloads there", () => {
    const r = compareProtection(config(["payments.*"]), "c", "payments.dlq", to("orders.retry"));
    expect(r.lessProtected).toEqual([{ kind: "target", queue: "orders.retry", roles: ["viewer"] }]);
    expect(r.message).toMatch(/payments\.dlq is marked sensitive/);
  });

  it("sensitive into sensitive, or an unmarked DLQ anywhere, is fine", () => {
    expect(compareProtection(config(["payments.*"]), "c", "payments.dlq", to("payments.retry")).message).toBeNull();
    expect(compareProtection(config(["payments.*"]), "c", "orders.dlq", to("payments.retry")).message).toBeNull();
    expect(compareProtection(config([]), "c", "orders.dlq", to("orders.retry")).message).toBeNull();
  });

  it("operators lose rules meant for viewers only when a sensitive DLQ's letters leave it", () => {
    const viewerOnly: MaskingRule = {
      id: "names",
      description: "",
      enabled: true,
      target: { kind: "field", paths: ["name"] },
      action: { kind: "hide" },
      roles: ["viewer"],
    };
    const r = compareProtection(config(["payments.*"], [viewerOnly]), "c", "payments.dlq", to("orders.retry"));
    expect(r.lessProtected[0]!.roles).toEqual(["viewer", "operator", "admin"]);
  });

  it("names the parking queue too, and never the origin", () => {
    expect(destinationsOf({ target: { kind: "origin" }, parking: { kind: "mark" } })).toEqual([]);
    expect(destinationsOf({ target: { kind: "queue", name: "a" }, parking: { kind: "queue", name: "b" } })).toEqual([
      { kind: "target", queue: "a" },
      { kind: "parking", queue: "b" },
    ]);
  });
});
