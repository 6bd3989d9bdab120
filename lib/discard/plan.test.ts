import { describe, expect, it } from "vitest";
import { discardStartSchema, unindexedOf } from "./plan";

const SHA = "b".repeat(64);
const letter = { letterId: "m-1", digest: SHA };

describe("unindexedOf", () => {
  it("is the letter its page read when the selection is exactly that letter", () => {
    expect(unindexedOf({ selection: { kind: "letters", letterIds: ["m-1", "m-1"] }, unindexed: letter })).toEqual(
      letter,
    );
  });

  it("is nothing for any other selection, so it cannot widen a discard", () => {
    expect(unindexedOf({ selection: { kind: "letters", letterIds: ["m-2"] }, unindexed: letter })).toBeNull();
    expect(unindexedOf({ selection: { kind: "letters", letterIds: ["m-1", "m-2"] }, unindexed: letter })).toBeNull();
    expect(unindexedOf({ selection: { kind: "filter" }, unindexed: letter })).toBeNull();
    expect(unindexedOf({ selection: { kind: "letters", letterIds: ["m-1"] } })).toBeNull();
  });

  it("needs a checksum as a page shows one to guard the start", () => {
    const r = discardStartSchema.safeParse({
      connectionId: "c",
      queue: "q",
      selection: { kind: "letters", letterIds: ["m-1"] },
      unindexed: { letterId: "m-1", digest: "[hidden]" },
      reason: "a reason",
      confirmedCount: 1,
    });
    expect(r.success).toBe(false);
  });
});
