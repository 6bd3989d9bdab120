// Repair on Pulsar: which property edits are refused, and the copy's properties.
import { describe, expect, it } from "vitest";
import { archiveFailure, repairProblem, repairProperties } from "@/lib/brokers/pulsar/repair";
import { AppError } from "@/lib/errors";

const op = "9b2f7c4e-1a2b-4c3d-8e9f-0a1b2c3d4e5f";

describe("repairProblem", () => {
  it("refuses Pulsar's dead-letter properties and the console's markers, naming them", () => {
    for (const name of [
      "REAL_TOPIC",
      "REAL_SUBSCRIPTION",
      "ORIGIN_MESSAGE_ID",
      "RECONSUMETIMES",
      "x-dlq-redrive-count",
    ]) {
      expect(repairProblem({ operationId: op, setHeaders: { [name]: "x" } }), name).toContain(`"${name}"`);
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

describe("archiveFailure", () => {
  it("says the copy was published and shows an operator message, never a raw error", () => {
    expect(
      archiveFailure(
        new AppError("unavailable:database", { userMessage: "The database is down." }),
        "t/n/orders",
        "t/n/orders/5:0:-1",
      ),
    ).toMatch(/published to topic t\/n\/orders \(t\/n\/orders\/5:0:-1\).*The database is down/);
    expect(archiveFailure(new Error("ECONNRESET secret detail"), "t/n/orders", null)).not.toContain("ECONNRESET");
  });
});
