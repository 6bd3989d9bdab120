import { describe, expect, it } from "vitest";
import { judge, ruleApplies, type DlqVitals } from "./match";
import { describeCondition, isGroupKind, parseCondition, type DlqCondition } from "./rules";

const NOW = new Date("2026-12-02T12:00:00Z");
const min = (n: number) => new Date(NOW.getTime() - n * 60_000);
const later = (n: number) => new Date(NOW.getTime() + n * 60_000);

function vitals(v: Partial<DlqVitals> = {}): DlqVitals {
  return {
    depth: 5,
    oldestAt: null,
    oldestSource: "broker",
    oldestAsOf: null,
    deadlineAt: null,
    error: null,
    missingSince: null,
    ...v,
  };
}

function cond(kind: string, params: unknown): DlqCondition {
  const p = parseCondition(kind, params);
  if (!p.ok) throw new Error(p.message);
  if (isGroupKind(p.condition.kind)) throw new Error(`${kind} is judged per group, not per DLQ`);
  return p.condition as DlqCondition;
}

const ctx = (
  v: DlqVitals | null,
  extra: Partial<{ inflow: number; finding: { severity: string; code: string; object: string } | null }> = {},
) => ({
  now: NOW,
  vitals: v,
  inflow: extra.inflow ?? 0,
  finding: extra.finding ?? null,
});

describe("ruleApplies", () => {
  const dlq = { connectionId: "prod-rabbit", queue: "orders.payments.dlq" };
  it("applies everywhere when no scope field is set", () => {
    expect(ruleApplies({ connectionId: null, queuePattern: null, ownerTeam: null }, dlq, null)).toBe(true);
  });
  it("needs every set field to match: connection, name glob, owning team", () => {
    const all = { connectionId: "prod-rabbit", queuePattern: "orders.*", ownerTeam: "Payments" };
    expect(ruleApplies(all, dlq, { team: "payments" })).toBe(true);
    expect(ruleApplies({ ...all, connectionId: "other" }, dlq, { team: "payments" })).toBe(false);
    expect(ruleApplies({ ...all, queuePattern: "billing.*" }, dlq, { team: "payments" })).toBe(false);
    expect(ruleApplies(all, dlq, { team: "search" })).toBe(false);
    expect(ruleApplies(all, dlq, null)).toBe(false);
  });
  it("matches the name glob whole, with ? for one character", () => {
    const scope = { connectionId: null, ownerTeam: null };
    expect(ruleApplies({ ...scope, queuePattern: "orders.?ayments.dlq" }, dlq, null)).toBe(true);
    expect(ruleApplies({ ...scope, queuePattern: "payments" }, dlq, null)).toBe(false);
    expect(ruleApplies({ ...scope, queuePattern: "*payments*" }, dlq, null)).toBe(true);
  });
});

describe("parseCondition", () => {
  it("refuses values that do not fit the kind", () => {
    expect(parseCondition("depth_above", { depth: -1 }).ok).toBe(false);
    expect(parseCondition("inflow_within", { minutes: 0 }).ok).toBe(false);
    expect(parseCondition("finding_at_least", { severity: "fatal" }).ok).toBe(false);
    expect(parseCondition("nonsense", {}).ok).toBe(false);
    expect(parseCondition("oldest_above", { minutes: "90" })).toMatchObject({
      ok: true,
      condition: { params: { minutes: 90 } },
    });
  });

  it("takes the failure-group kinds: new and regressed without values, grew with letters and minutes (a day at most)", () => {
    for (const kind of ["group_new", "group_regressed"]) expect(parseCondition(kind, {}).ok).toBe(true);
    expect(parseCondition("group_grew", { letters: 0, minutes: 10 })).toMatchObject({
      ok: false,
      message: "At least 1 letter",
    });
    expect(parseCondition("group_grew", { letters: 5, minutes: 24 * 60 + 1 })).toMatchObject({ ok: false });
    expect(parseCondition("group_grew", { letters: 5 })).toMatchObject({ ok: false });
    const grew = parseCondition("group_grew", { letters: "50", minutes: "10" });
    expect(grew).toMatchObject({ ok: true, condition: { kind: "group_grew", params: { letters: 50, minutes: 10 } } });
    if (grew.ok)
      expect(describeCondition(grew.condition)).toBe("a failure group grew by 50 letters or more within 10 min");
  });
});

describe("judge", () => {
  it("depth_above fires above n, not at n", () => {
    const c = cond("depth_above", { depth: 10 });
    expect(judge(c, ctx(vitals({ depth: 11 })))).toEqual({ state: "firing", value: "depth 11" });
    expect(judge(c, ctx(vitals({ depth: 10 })))).toEqual({ state: "clear", value: "depth 10" });
    expect(judge(c, ctx(vitals({ depth: null })))).toEqual({ state: "unknown" });
  });

  it("keeps the state (unknown) when the sampler could not read the DLQ, and clears when the DLQ is gone", () => {
    const c = cond("depth_above", { depth: 0 });
    expect(judge(c, ctx(vitals({ depth: 50, error: "broker unreachable" })))).toEqual({ state: "unknown" });
    expect(judge(c, ctx(vitals({ depth: 50, missingSince: min(1) })))).toEqual({
      state: "clear",
      value: "the DLQ is gone from its broker",
    });
    expect(judge(c, ctx(null))).toEqual({ state: "unknown" });
  });

  it("inflow_within fires on any letter in the window", () => {
    const c = cond("inflow_within", { minutes: 15 });
    expect(judge(c, ctx(vitals(), { inflow: 3 }))).toEqual({
      state: "firing",
      value: "3 letters entered in the last 15 min",
    });
    expect(judge(c, ctx(vitals(), { inflow: 0 }))).toEqual({
      state: "clear",
      value: "0 letters entered in the last 15 min",
    });
  });

  it("oldest_above compares the oldest letter's age and says when the figure comes from a scan", () => {
    const c = cond("oldest_above", { minutes: 60 });
    expect(judge(c, ctx(vitals({ oldestAt: min(90) })))).toEqual({
      state: "firing",
      value: "oldest letter 1 h 30 min old",
    });
    expect(judge(c, ctx(vitals({ oldestAt: min(30) })))).toMatchObject({ state: "clear" });
    expect(judge(c, ctx(vitals({ oldestAt: min(125), oldestSource: "scan", oldestAsOf: min(12) })))).toEqual({
      state: "firing",
      value: "oldest letter 2 h 5 min old, as of the scan 12 min ago",
    });
    expect(judge(c, ctx(vitals({ depth: 0, oldestAt: min(500) })))).toEqual({
      state: "clear",
      value: "the DLQ is empty",
    });
    expect(judge(c, ctx(vitals({ oldestAt: null })))).toEqual({ state: "unknown" });
  });

  it("deadline_within fires when the oldest letter is lost within t, or already being lost", () => {
    const c = cond("deadline_within", { minutes: 120 });
    const soon = judge(c, ctx(vitals({ oldestAt: min(60), deadlineAt: later(45) })));
    expect(soon).toEqual({
      state: "firing",
      value: "oldest letter lost to retention in 45 min (at 2026-12-02 12:45:00 UTC)",
    });
    expect(judge(c, ctx(vitals({ oldestAt: min(60), deadlineAt: later(600) })))).toMatchObject({ state: "clear" });
    const past = judge(c, ctx(vitals({ oldestAt: min(60), deadlineAt: min(5) })));
    expect(past.state).toBe("firing");
    expect(past.state === "firing" && past.value).toContain("being lost to retention now");
    expect(judge(c, ctx(vitals({ oldestAt: min(60), deadlineAt: null })))).toMatchObject({ state: "clear" });
    expect(judge(c, ctx(vitals({ oldestAt: null, deadlineAt: null })))).toEqual({ state: "unknown" });
  });

  it("finding_at_least ranks info < warning < critical", () => {
    const warn = cond("finding_at_least", { severity: "warning" });
    const f = (severity: string) => ({ severity, code: "rabbitmq.dlx_missing", object: "exchange dlx" });
    expect(judge(warn, ctx(vitals(), { finding: f("critical") }))).toEqual({
      state: "firing",
      value: "critical finding rabbitmq.dlx_missing on exchange dlx",
    });
    expect(judge(warn, ctx(vitals(), { finding: f("warning") })).state).toBe("firing");
    expect(judge(warn, ctx(vitals(), { finding: f("info") })).state).toBe("clear");
    expect(judge(warn, ctx(null, { finding: null })).state).toBe("clear");
    // A finding is about configuration: it is judged even when the DLQ's vitals are unknown.
    expect(judge(warn, ctx(null, { finding: f("critical") })).state).toBe("firing");
  });
});
