// Repair on Pulsar: which property edits are refused (the shared repairRefusal with Pulsar's rules), and the copy's properties.
import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import { repairRefusal } from "@/lib/brokers/move-rules";
import type { LetterRepair } from "@/lib/brokers/contract/move";
import { PULSAR_REPAIR_RULES, repairProperties } from "@/lib/brokers/pulsar/repair";

const repairProblem = (repair: LetterRepair) => repairRefusal(repair, PULSAR_REPAIR_RULES, isManagedHeader);

const op = "9b2f7c4e-1a2b-4c3d-8e9f-0a1b2c3d4e5f";

describe("repairRefusal with Pulsar's rules", () => {
  it("refuses Pulsar's dead-letter properties and the console's markers, naming them", () => {
    for (const name of [
      "REAL_TOPIC",
      "REAL_SUBSCRIPTION",
      "ORIGIN_MESSAGE_ID",
      "RECONSUMETIMES",
      "x-dlq-redrive-count",
    ]) {
      expect(repairProblem({ operationId: op, setHeaders: { [name]: "x" } }), name).toBe(
        `The property "${name}" is kept by Pulsar's dead-lettering or the console (where the letter failed, and the console's own x-dlq-* markers) and cannot be changed by a repair. Nothing was published; the letter stays in the DLQ.`,
      );
      expect(repairProblem({ operationId: op, removeHeaders: [name] }), name).toMatch(/cannot be changed/);
    }
  });
  it("refuses a nameless property and one both set and removed; passes the refusal a group repair gives", () => {
    expect(repairProblem({ operationId: op, setHeaders: { "": "x" } })).toMatch(/without a name/);
    expect(repairProblem({ operationId: op, setHeaders: { tenant: "a" }, removeHeaders: ["tenant"] })).toMatch(
      /both set and removed/,
    );
    expect(repairProblem({ operationId: op, refuse: "The patch does not fit this letter." })).toBe(
      "The patch does not fit this letter.",
    );
    expect(repairProblem({ operationId: op, setHeaders: { tenant: "eu" }, removeHeaders: ["debug"] })).toBeNull();
  });
});

describe("repairProperties", () => {
  const original = {
    REAL_TOPIC: "persistent://t/n/orders",
    tenant: "acme",
    debug: "1",
    "Message-Id": "m-1",
    correlationId: "c-1",
  };
  it("sets in place, adds at the end, removes, and gives application message ids the replay id", () => {
    const out = repairProperties(
      original,
      { operationId: op, setHeaders: { tenant: "acme-eu", "fixed-by": "ops" }, removeHeaders: ["debug"] },
      "replay-1",
    );
    expect(Object.entries(out)).toEqual([
      ["REAL_TOPIC", "persistent://t/n/orders"],
      ["tenant", "acme-eu"],
      ["Message-Id", "replay-1"],
      ["correlationId", "c-1"],
      ["fixed-by", "ops"],
    ]);
  });
  it("an explicit message id wins; a correlation id replaces the existing one or is added", () => {
    expect(
      repairProperties(original, { operationId: op, setHeaders: { "Message-Id": "chosen" } }, "replay-1")["Message-Id"],
    ).toBe("chosen");
    expect(repairProperties(original, { operationId: op, correlationId: "c-2" }, "r")).toMatchObject({
      correlationId: "c-2",
    });
    expect(repairProperties({ a: "1" }, { operationId: op, correlationId: "c-3" }, "r")).toEqual({
      a: "1",
      "correlation-id": "c-3",
    });
  });
});
