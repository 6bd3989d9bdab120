import { describe, expect, it } from "vitest";
import { isRepairedOriginal, repairReason, shortOperation } from "./repaired";

describe("repaired originals in the archive", () => {
  it("are told apart from discards by the reason a repair archives them with", () => {
    expect(isRepairedOriginal("Repaired and resubmitted: PAYED typo (INC-7)")).toBe(true);
    expect(repairReason("Repaired and resubmitted: PAYED typo (INC-7)")).toBe("PAYED typo (INC-7)");
    // An admin's discard reason that merely mentions a repair is still a discard.
    expect(isRepairedOriginal("Retired after it was Repaired and resubmitted: elsewhere")).toBe(false);
    expect(repairReason("Retired test orders")).toBe("Retired test orders");
  });

  it("shortens an operation id for its chip", () => {
    expect(shortOperation("1234abcd-0000-4000-8000-000000000000")).toBe("1234abcd…");
  });
});
