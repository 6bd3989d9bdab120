import { describe, expect, it } from "vitest";
import {
  ignoreColumns,
  ignoreRuleOf,
  operatorTransition,
  systemTransition,
  type IgnoreRule,
  type IssueLife,
  type OperatorChange,
} from "./issue-lifecycle";

const NOW = new Date("2026-06-01T12:00:00.000Z");
const at = (minutes: number) => new Date(NOW.getTime() + minutes * 60_000);

function issue(over: Partial<IssueLife> = {}): IssueLife {
  return {
    state: "new",
    stateChangedAt: at(-60),
    resolvedAt: null,
    resolveNote: null,
    ignore: null,
    letters: 10,
    lastSeenAt: at(-30),
    ...over,
  };
}

describe("systemTransition", () => {
  const resolved = issue({ state: "resolved", stateChangedAt: at(-20), resolvedAt: at(-20) });
  const ignoredCount = (untilCount: number) =>
    issue({ state: "ignored", ignore: { mode: "until_count", letters: 5, untilCount } });
  const ignoredUntil = (until: Date, stateChangedAt = at(-20)) =>
    issue({ state: "ignored", stateChangedAt, ignore: { mode: "until_time", until } });

  const cases: Array<[string, IssueLife | null, { lastAt: Date | null; letters: number }, string | null]> = [
    ["a group seen for the first time is new", null, { lastAt: at(-1), letters: 3 }, "new: first seen"],
    ["a new group seen again stays new", issue(), { lastAt: at(-1), letters: 12 }, null],
    [
      "an acknowledged group with more letters stays acknowledged",
      issue({ state: "acknowledged" }),
      { lastAt: at(-1), letters: 50 },
      null,
    ],
    [
      "resolved, then a letter dead-lettered after the resolve: regressed",
      resolved,
      { lastAt: at(-5), letters: 11 },
      `regressed: a letter dead-lettered at ${at(-5).toISOString()} arrived after the resolve at ${at(-20).toISOString()}`,
    ],
    [
      "resolved, letters still there from before the resolve: stays resolved",
      resolved,
      { lastAt: at(-30), letters: 10 },
      null,
    ],
    [
      "resolved, an old letter read only now (dead-lettered before the resolve): stays resolved",
      resolved,
      { lastAt: at(-25), letters: 11 },
      null,
    ],
    [
      "resolved while the newest letter was already later than the resolve (a broker clock ahead): stays resolved",
      issue({ state: "resolved", resolvedAt: at(-40), stateChangedAt: at(-40), lastSeenAt: at(-30) }),
      { lastAt: at(-30), letters: 10 },
      null,
    ],
    ["resolved, no letter present: stays resolved", resolved, { lastAt: null, letters: 10 }, null],
    ["ignored until 15 letters, at 14: stays ignored", ignoredCount(15), { lastAt: at(-1), letters: 14 }, null],
    [
      "ignored until 15 letters, at 15: regressed",
      ignoredCount(15),
      { lastAt: at(-1), letters: 15 },
      "regressed: ignore ended after 5 more letters",
    ],
    ["ignored until a time to come: stays ignored", ignoredUntil(at(10)), { lastAt: at(-1), letters: 20 }, null],
    [
      "ignored until a time that passed, letters meanwhile: regressed",
      ignoredUntil(at(-1)),
      { lastAt: at(-5), letters: 20 },
      `regressed: ignore ended at ${at(-1).toISOString()}; letters arrived while it was ignored`,
    ],
    [
      "ignored until a time that passed, no letter meanwhile: acknowledged",
      ignoredUntil(at(-1)),
      { lastAt: at(-30), letters: 10 },
      `acknowledged: ignore ended at ${at(-1).toISOString()}; no letter arrived while it was ignored`,
    ],
    [
      "ignored until a time that passed, group gone from the DLQ: acknowledged",
      ignoredUntil(at(0)),
      { lastAt: null, letters: 10 },
      `acknowledged: ignore ended at ${at(0).toISOString()}; no letter arrived while it was ignored`,
    ],
    [
      "ignored forever: stays ignored whatever arrives",
      issue({ state: "ignored", ignore: { mode: "forever" } }),
      { lastAt: at(-1), letters: 10_000 },
      null,
    ],
    ["regressed stays regressed", issue({ state: "regressed" }), { lastAt: at(-1), letters: 30 }, null],
  ];

  it.each(cases)("%s", (_name, before, seen, expected) => {
    const t = systemTransition(before, seen, NOW);
    expect(t ? `${t.to}: ${t.reason}` : null).toBe(expected);
  });
});

describe("operatorTransition", () => {
  const cases: Array<[string, IssueLife, OperatorChange, Partial<ReturnType<typeof operatorTransition>> | null]> = [
    [
      "acknowledge a new issue",
      issue(),
      { to: "acknowledged" },
      { state: "acknowledged", stateChangedAt: NOW, ignore: null },
    ],
    ["acknowledge an acknowledged issue: no change", issue({ state: "acknowledged" }), { to: "acknowledged" }, null],
    [
      "resolve 'in the next release'",
      issue({ state: "regressed" }),
      { to: "resolved", note: "  in the next release " },
      { state: "resolved", resolvedAt: NOW, resolveNote: "in the next release" },
    ],
    [
      "resolve a resolved issue with the same note: no change",
      issue({ state: "resolved", resolvedAt: at(-5), resolveNote: "v2" }),
      { to: "resolved", note: "v2" },
      null,
    ],
    [
      "ignore until 5 more letters records the count it ends at",
      issue({ letters: 42 }),
      { to: "ignored", ignore: { mode: "until_count", letters: 5 } },
      { state: "ignored", ignore: { mode: "until_count", letters: 5, untilCount: 47 } },
    ],
    [
      "ignore until a time",
      issue(),
      { to: "ignored", ignore: { mode: "until_time", until: at(60) } },
      { state: "ignored", ignore: { mode: "until_time", until: at(60) } },
    ],
    [
      "a resolved issue that is acknowledged forgets its resolve",
      issue({ state: "resolved", resolvedAt: at(-5), resolveNote: "v2" }),
      { to: "acknowledged" },
      { state: "acknowledged", resolvedAt: null, resolveNote: null },
    ],
    [
      "ignore forever twice: no change",
      issue({ state: "ignored", ignore: { mode: "forever" } }),
      { to: "ignored", ignore: { mode: "forever" } },
      null,
    ],
  ];

  it.each(cases)("%s", (_name, before, change, expected) => {
    const patch = operatorTransition(before, change, NOW);
    if (expected === null) expect(patch).toBeNull();
    else expect(patch).toMatchObject(expected);
  });

  it.each([
    ["a time already past", { mode: "until_time", until: at(-1) }],
    ["now", { mode: "until_time", until: NOW }],
    ["zero letters", { mode: "until_count", letters: 0 }],
    ["a fraction of a letter", { mode: "until_count", letters: 1.5 }],
  ] as const)("refuses to ignore until %s", (_name, ignore) => {
    expect(() => operatorTransition(issue(), { to: "ignored", ignore } as OperatorChange, NOW)).toThrow(
      expect.objectContaining({ code: "bad_request:ignore" }),
    );
  });
});

describe("ignore rule columns", () => {
  it.each<IgnoreRule | null>([
    null,
    { mode: "forever" },
    { mode: "until_time", until: at(5) },
    { mode: "until_count", letters: 3, untilCount: 13 },
  ])("round-trips %j", (rule) => {
    expect(ignoreRuleOf(ignoreColumns(rule))).toEqual(rule);
  });
});
