import { describe, expect, it } from "vitest";
import { formatShare, groupName, largestGroup, type GroupCount } from "./top-failure-view";

const g = (key: string, count: number, over: Partial<GroupCount> = {}): GroupCount => ({
  key,
  basis: "exception",
  exceptionClass: `com.acme.${key}`,
  reason: null,
  count,
  ...over,
});

describe("largestGroup", () => {
  it("picks the group with the most letters and counts every letter as the whole", () => {
    const r = largestGroup([g("a", 3), g("b", 31), g("c", 16)]);
    expect(r?.top.key).toBe("b");
    expect(r?.total).toBe(50);
  });

  it("breaks a tie by the group key, as the triage page orders them", () => {
    expect(largestGroup([g("z", 5), g("m", 5)])?.top.key).toBe("m");
  });

  it("ignores empty groups and answers null when nothing is counted", () => {
    expect(largestGroup([g("a", 0)])).toBeNull();
    expect(largestGroup([])).toBeNull();
    expect(largestGroup([g("a", 0), g("b", 2)])?.total).toBe(2);
  });
});

describe("formatShare", () => {
  it("rounds to a whole percent", () => {
    expect(formatShare(31, 50)).toBe("62%");
    expect(formatShare(1, 3)).toBe("33%");
  });

  it("never says 0% for a group with letters, nor 100% unless it holds them all", () => {
    expect(formatShare(1, 1000)).toBe("<1%");
    expect(formatShare(999, 1000)).toBe("99%");
    expect(formatShare(7, 7)).toBe("100%");
    expect(formatShare(0, 7)).toBe("0%");
  });
});

describe("groupName", () => {
  it("names an exception group by its class and a reason group by its reason, as the group page does", () => {
    expect(groupName({ basis: "exception", exceptionClass: "java.lang.NullPointerException", reason: null })).toBe(
      "java.lang.NullPointerException",
    );
    expect(groupName({ basis: "reason", exceptionClass: null, reason: "rejected / 2-3" })).toBe("rejected / 2-3");
    expect(groupName({ basis: "exception", exceptionClass: null, reason: null })).toBe("(no class)");
    expect(groupName({ basis: "reason", exceptionClass: null, reason: null })).toBe("No reason given");
  });
});
