import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import { REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import { repairRefusal } from "@/lib/brokers/move-rules";
import type { LetterRepair } from "@/lib/brokers/contract/move";
import { copyIdOf, KAFKA_REPAIR_RULES, repairHeaders } from "@/lib/brokers/kafka/repair";

const repairProblem = (repair: LetterRepair) => repairRefusal(repair, KAFKA_REPAIR_RULES, isManagedHeader);

const b = (s: string) => Buffer.from(s);
const text = (h: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => String(x)) : String(v)]));
const op = "6f0c1a52-4a3f-4d0e-9a51-0b7c6d2e8f10";

describe("repairHeaders", () => {
  it("sets in place, adds new names at the end, removes every entry of a name, keeps the rest as they were (binary, repeated)", () => {
    const part = Buffer.from([0, 0, 0, 3]);
    const h = repairHeaders(
      { "x-tenant": b("acme"), "kafka_dlt-original-partition": part, "x-debug": [b("a"), b("b")], "x-app": b("app") },
      { operationId: op, setHeaders: { "x-tenant": "acme-eu", "x-fixed-by": "ops" }, removeHeaders: ["x-debug"] },
      "replay",
    );
    expect(Object.keys(h)).toEqual(["x-tenant", "kafka_dlt-original-partition", "x-app", "x-fixed-by"]);
    expect(h["kafka_dlt-original-partition"]).toBe(part);
    expect(text(h)).toMatchObject({ "x-tenant": "acme-eu", "x-app": "app", "x-fixed-by": "ops" });
  });

  it("a set name that repeats becomes one entry with the new value, where the first one was", () => {
    const h = repairHeaders(
      { first: b("1"), "x-schema": [b("v1"), b("v1b")], last: b("z") },
      { operationId: op, setHeaders: { "x-schema": "v2" } },
      "replay",
    );
    expect(Object.keys(h)).toEqual(["first", "x-schema", "last"]);
    expect(text(h)["x-schema"]).toBe("v2");
  });

  it("gives every message-id header the new id (a consumer that deduplicates on it must not drop the copy); none is added", () => {
    expect(
      text(
        repairHeaders(
          { "message-id": b("m-1"), ce_id: b("e-1"), "Message-ID": b("m-2"), other: b("o") },
          { operationId: op },
          "replay",
        ),
      ),
    ).toEqual({
      "message-id": "replay",
      ce_id: "replay",
      "Message-ID": "replay",
      other: "o",
    });
    expect(repairHeaders({ other: b("o") }, { operationId: op }, "replay")).not.toHaveProperty("message-id");
    // An explicit edit of the id is the operator's choice.
    expect(
      text(
        repairHeaders(
          { "message-id": b("m-1") },
          { operationId: op, setHeaders: { "message-id": "chosen" } },
          "replay",
        ),
      )["message-id"],
    ).toBe("chosen");
  });

  it("correlation id: only when asked; replaces either spelling, else adds correlation-id at the end", () => {
    expect(text(repairHeaders({ correlationId: b("c-1") }, { operationId: op }, "r"))).toEqual({
      correlationId: "c-1",
    });
    expect(
      text(repairHeaders({ correlationId: b("c-1"), x: b("x") }, { operationId: op, correlationId: "c-2" }, "r")),
    ).toEqual({ correlationId: "c-2", x: "x" });
    expect(
      text(
        repairHeaders(
          { "Correlation-Id": [b("c-1"), b("c-1b")], "correlation-id": b("c-0") },
          { operationId: op, correlationId: "c-2" },
          "r",
        ),
      ),
    ).toEqual({ "Correlation-Id": "c-2", "correlation-id": "c-2" });
    const added = repairHeaders({ "x-correlation-id": b("keep") }, { operationId: op, correlationId: "c-2" }, "r");
    expect(Object.keys(added)).toEqual(["x-correlation-id", "correlation-id"]);
    expect(text(added)["correlation-id"]).toBe("c-2");
  });

  it("a header without value that is set or removed no longer stops the copy; one left alone stays null", () => {
    expect(
      repairHeaders({ "__x.null": null, keep: b("k") }, { operationId: op, removeHeaders: ["__x.null"] }, "r"),
    ).not.toHaveProperty("__x.null");
    expect(repairHeaders({ "y.null": null }, { operationId: op }, "r")["y.null"]).toBeNull();
  });
});

describe("repairRefusal with Kafka's rules", () => {
  it("refuses Kafka's and the console's own headers, in set and remove alike, naming them", () => {
    for (const name of [
      "kafka_dlt-original-topic",
      "__connect.errors.topic",
      "__streams.errors.message",
      "x-dlq-redrive-count",
      REPAIR_HEADER,
      "X-DLQ-Replay-Id",
    ]) {
      expect(repairProblem({ operationId: op, setHeaders: { [name]: "v" } }), name).toContain(`"${name}"`);
      expect(repairProblem({ operationId: op, removeHeaders: [name] }), name).toMatch(
        /is kept by Kafka or the console.*cannot be changed.*Nothing was published; the letter stays in the DLT\.$/,
      );
    }
  });
  it("refuses a name both set and removed, and an empty name; accepts ordinary edits", () => {
    expect(repairProblem({ operationId: op, setHeaders: { a: "1" }, removeHeaders: ["a"] })).toMatch(
      /both set and removed/,
    );
    expect(repairProblem({ operationId: op, setHeaders: { "": "1" } })).toMatch(/without a name/);
    expect(
      repairProblem({
        operationId: op,
        setHeaders: { "x-tenant": "eu", "message-id": "m" },
        removeHeaders: ["x-debug"],
        correlationId: "c",
      }),
    ).toBeNull();
  });
  it("Kafka's own limit: text that UTF-8 cannot keep (a lone surrogate) in a name, a value or the correlation id", () => {
    const lone = "x-\ud800";
    expect(repairProblem({ operationId: op, setHeaders: { [lone]: "v" } })).toMatch(
      /header name .* is not valid Unicode text.*Nothing was published/,
    );
    expect(repairProblem({ operationId: op, removeHeaders: [lone] })).toMatch(/not valid Unicode text/);
    expect(repairProblem({ operationId: op, setHeaders: { "x-a": "bad \udc00" } })).toMatch(
      /value of header "x-a" is not valid Unicode text/,
    );
    expect(repairProblem({ operationId: op, correlationId: "\ud83d" })).toMatch(/correlation id is not valid Unicode/);
    expect(repairProblem({ operationId: op, setHeaders: { "x-emoji": "💥 ok" }, correlationId: "ünï" })).toBeNull();
  });
  it("a refusal the console decided (a group repair's patch that does not fit) is given as it is", () => {
    expect(repairProblem({ operationId: op, refuse: "Does not fit." })).toBe("Does not fit.");
  });
});

describe("copyIdOf", () => {
  it("is <topic>/<partition>/<offset>", () => {
    expect(copyIdOf("orders", { partition: 2, offset: "41" })).toBe("orders/2/41");
  });
});
