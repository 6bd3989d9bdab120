import { describe, expect, it } from "vitest";
import { DEFAULT_GROUP_DLT, dltNameFor } from "./dlt";

describe("dltNameFor", () => {
  it("defaults to <topic>.DLT without settings or without a matching entry", () => {
    expect(DEFAULT_GROUP_DLT).toBe("{topic}.DLT");
    expect(dltNameFor(undefined, "payments-app", "payments")).toBe("payments.DLT");
    expect(dltNameFor({ dlts: [] }, "payments-app", "payments")).toBe("payments.DLT");
    expect(dltNameFor({ dlts: [{ group: "orders-*", dlt: "orders-dead" }] }, "payments-app", "payments")).toBe(
      "payments.DLT",
    );
  });

  it("takes the first entry whose group glob matches, with {topic} replaced everywhere", () => {
    const settings = {
      dlts: [
        { group: "billing-?", dlt: "billing.{topic}.dead" },
        { group: "billing-*", dlt: "{topic}-dlt-{topic}" },
        { group: "*", dlt: "all.dead" },
      ],
    };
    expect(dltNameFor(settings, "billing-1", "invoices")).toBe("billing.invoices.dead");
    expect(dltNameFor(settings, "billing-eu", "invoices")).toBe("invoices-dlt-invoices");
    expect(dltNameFor(settings, "other", "invoices")).toBe("all.dead");
  });

  it("matches the whole group id, case-insensitively, and treats regex characters literally", () => {
    const settings = { dlts: [{ group: "app.v1", dlt: "fixed" }] };
    expect(dltNameFor(settings, "APP.V1", "t")).toBe("fixed");
    expect(dltNameFor(settings, "appxv1", "t")).toBe("t.DLT");
    expect(dltNameFor(settings, "app.v1-extra", "t")).toBe("t.DLT");
  });
});
