import { describe, expect, it } from "vitest";
import { missingWords } from "./missing-page";

describe("missingWords", () => {
  it("names the DLQ and its connection for an unknown queue, once", () => {
    const w = missingWords("/dlqs/local-rabbit/orders.nope.dlq");
    expect(w.title).toBe('The DLQ "orders.nope.dlq" does not exist on local-rabbit.');
    expect(w.back.href).toBe("/");
  });

  it("says 'no such letter' for a letter id, decoded, and never that it was redriven or discarded", () => {
    const w = missingWords("/dlqs/local-rabbit/demo.orders.dlq/letters/made%2Fup-1");
    expect(w.title).toBe("No such letter: made/up-1");
    expect(`${w.title} ${w.body}`).not.toMatch(/redriven|discarded|expired|consumed/);
    expect(w.back.href).toBe("/dlqs/local-rabbit/demo.orders.dlq");
  });

  it("names redrives, discards, archived letters, alert rules and consumer groups", () => {
    expect(missingWords("/dlqs/c/q/redrive/1234").title).toBe("There is no such redrive: 1234");
    expect(missingWords("/dlqs/c/q/discard/9").back.href).toBe("/dlqs/c/q/discard");
    expect(missingWords("/archive/abc").title).toContain("no archived letter abc");
    expect(missingWords("/alerts/x").title).toBe("There is no such alert rule.");
    expect(missingWords("/groups/local-kafka/g1").title).toBe('There is no consumer group "g1" on local-kafka.');
  });

  it("falls back to the plain words for any other address, and survives a malformed escape", () => {
    expect(missingWords("/nope").title).toBe("Nothing here.");
    expect(missingWords("/dlqs/c/%E0%A4%A/letters/x").title).toBe("No such letter: x");
  });
});
