import { describe, expect, it } from "vitest";
import {
  confirmPhrase,
  controlsFor,
  describeScope,
  displayState,
  formatDuration,
  ledgerWords,
  newRedriveQuery,
  parseSample,
  readNumbers,
  fractionOf,
  sampleLetters,
  selectionFromSearch,
  timeline,
  verdictBadge,
  verdictWords,
  STATE_BADGE,
  STATE_WORDS,
} from "./ui-format";

describe("redrive scope and confirmation", () => {
  it("names the count, the group and the DLQ", () => {
    expect(
      describeScope({ kind: "group", groupKey: "k1" }, 23, "demo.orders.dlq", "java.net.SocketTimeoutException"),
    ).toBe("23 letters of group java.net.SocketTimeoutException in demo.orders.dlq");
    expect(describeScope({ kind: "letters", letterIds: ["a"] }, 1, "q")).toBe("1 letter chosen by hand in q");
    expect(describeScope({ kind: "filter", filter: {} }, 1200, "q")).toBe("all 1,200 letters in q");
    expect(
      describeScope({ kind: "filter", filter: { groupKey: "k", text: "Tax", exceptionClass: "X" } }, 2, "q", "G"),
    ).toBe("2 letters of group G where text contains “Tax”, exception X in q");
    expect(confirmPhrase(23)).toBe("Redrive 23 letters");
    expect(confirmPhrase(1)).toBe("Redrive 1 letter");
  });

  it("reads a selection from the same query string as triage, and builds it back", () => {
    const g = selectionFromSearch({ group: "abc" });
    expect(g.ok && g.selection).toEqual({ kind: "group", groupKey: "abc" });
    const f = selectionFromSearch({ group: "abc", q: "Tax", gone: "1" });
    expect(f.ok && f.selection).toEqual({ kind: "filter", filter: { groupKey: "abc", text: "Tax" } });
    const l = selectionFromSearch({ id: ["a", "b", "a"], group: "x" });
    expect(l.ok && l.selection).toEqual({ kind: "letters", letterIds: ["a", "b"] });
    expect(selectionFromSearch({ from: "yesterday" }).ok).toBe(false);
    expect(newRedriveQuery({ letterIds: ["a b", "c"] })).toBe("?id=a+b&id=c");
    expect(newRedriveQuery({ view: { group: "g", q: "x" } })).toBe("?group=g&q=x");
    expect(newRedriveQuery({ view: {} })).toBe("");
  });

  it("parses a sample as a count or a percentage", () => {
    expect(parseSample("5")).toEqual({ count: 5 });
    expect(parseSample(" 10 % ")).toEqual({ percent: 10 });
    expect(parseSample("0")).toBeNull();
    expect(parseSample("150%")).toBeNull();
    expect(parseSample("five")).toBeNull();
    expect(sampleLetters({ percent: 10 }, 23)).toBe(3);
    expect(sampleLetters({ count: 50 }, 23)).toBe(23);
  });
});

describe("redrive progress", () => {
  it("reads the job's progress as numbers, tolerating missing fields", () => {
    const n = readNumbers(
      {
        read: 10,
        total: 20,
        redriven: 8,
        failed: 1,
        missing: 1,
        pending: 10,
        rate: 4.9,
        targetRate: 5,
        eta: 2,
        sample: { size: 5, returned: 0, watchUntil: "2026-01-01T00:00:00Z" },
      },
      20,
    );
    expect(n).toMatchObject({
      settled: 10,
      redriven: 8,
      failed: 1,
      pending: 10,
      rate: 4.9,
      targetRate: 5,
      eta: 2,
      sampleSize: 5,
    });
    expect(fractionOf(n)).toBe(0.5);
    const empty = readNumbers({}, 7);
    expect(empty).toMatchObject({ total: 7, settled: 0, pending: 7, targetRate: null, eta: null });
    expect(fractionOf(readNumbers({}, 0))).toBe(0);
  });

  it("formats durations", () => {
    expect(formatDuration(45)).toBe("45 s");
    expect(formatDuration(120)).toBe("2 min");
    expect(formatDuration(125)).toBe("2 min 5 s");
    expect(formatDuration(3900)).toBe("1 h 5 min");
    expect(formatDuration(null)).toBe("—");
  });

  it("places the job on its timeline", () => {
    expect(timeline("watching", "running").map((s) => s.state)).toEqual(["done", "current", "todo", "todo", "todo"]);
    expect(timeline("awaiting_bulk", "paused").map((s) => s.state)).toEqual([
      "done",
      "done",
      "current",
      "todo",
      "todo",
    ]);
    expect(timeline("done", "succeeded").every((s) => s.state === "done")).toBe(true);
    const c = timeline("bulk", "cancelled");
    expect(c.map((s) => s.state)).toEqual(["done", "done", "done", "skipped", "current"]);
    expect(c[4].label).toBe("Cancelled");
  });

  it("words the verdict", () => {
    expect(verdictWords(null, 0, 5)).toBeNull();
    expect(verdictWords("clean", 0, 5)).toContain("Clean");
    expect(verdictWords("returned", 3, 5)).toBe("3 of 5 came back: the fix may not be working.");
    expect(verdictWords("inconclusive", 0, 2)).toBe(
      "Inconclusive: none of the 2 sample letters came back, but nothing shows a reader took them, so their not coming back proves nothing yet.",
    );
    expect(verdictBadge("inconclusive", 0, 2)).toEqual({ words: "inconclusive", badge: "badge-warn" });
    expect(verdictBadge("returned", 1, 2)).toEqual({ words: "1 of 2 came back", badge: "badge-danger" });
    expect(verdictBadge(null, 0, 2)).toBeNull();
  });

  it("a redrive paused after its sample reads as waiting for the go-ahead, not as a pause", () => {
    expect(displayState("paused", "awaiting_bulk")).toBe("awaiting_go_ahead");
    expect(STATE_WORDS[displayState("paused", "awaiting_bulk")]).toBe("Awaiting go-ahead");
    expect(STATE_BADGE[displayState("paused", "awaiting_bulk")]).toBe("badge-info");
    expect(displayState("paused", "bulk")).toBe("paused");
    expect(displayState("running", "awaiting_bulk")).toBe("running");
  });
});

describe("redrive controls", () => {
  const base = {
    state: "running",
    stage: "bulk",
    pauseRequested: false,
    cancelRequested: false,
    bulk: { ready: false, needsOverride: false },
  };
  const operator = { control: true, override: false, name: "operator" };
  const admin = { control: true, override: true, name: "admin" };

  it("a viewer gets every control disabled, with the reason", () => {
    const c = controlsFor(base, { control: false, override: false, name: "viewer" });
    expect([c.pause, c.resume, c.cancel, c.bulk].every((x) => !x.enabled && x.why?.includes("viewer"))).toBe(true);
  });

  it("running: pause and cancel; paused: resume", () => {
    const r = controlsFor(base, operator);
    expect([r.pause.enabled, r.resume.enabled, r.cancel.enabled, r.bulk.enabled]).toEqual([true, false, true, false]);
    const p = controlsFor({ ...base, state: "paused" }, operator);
    expect([p.pause.enabled, p.resume.enabled, p.cancel.enabled]).toEqual([false, true, true]);
    const d = controlsFor({ ...base, state: "succeeded", stage: "done" }, operator);
    expect([d.pause.enabled, d.resume.enabled, d.cancel.enabled, d.bulk.enabled]).toEqual([false, false, false, false]);
  });

  it("stage 2 after a clean sample for operators; after an unclean one only admins, via override", () => {
    const clean = { ...base, state: "paused", stage: "awaiting_bulk", bulk: { ready: true, needsOverride: false } };
    expect(controlsFor(clean, operator).bulk.enabled).toBe(true);
    expect(controlsFor(clean, operator).resume.enabled).toBe(false);
    expect(controlsFor(clean, operator).override).toBeNull();
    const dirty = { ...clean, bulk: { ready: true, needsOverride: true } };
    expect(controlsFor(dirty, operator).bulk.enabled).toBe(false);
    expect(controlsFor(dirty, operator).override?.enabled).toBe(false);
    expect(controlsFor(dirty, admin).override?.enabled).toBe(true);
    expect(controlsFor(dirty, admin).continueAnyway).toBeNull();
  });

  it("after an inconclusive sample, whoever may control it continues anyway with a reason; a viewer cannot", () => {
    const vague = {
      ...base,
      state: "paused",
      stage: "awaiting_bulk",
      bulk: { ready: true, needsOverride: false, needsReason: true },
    };
    const c = controlsFor(vague, operator);
    expect(c.bulk.enabled).toBe(false);
    expect(c.bulk.why).toMatch(/inconclusive/);
    expect(c.continueAnyway?.enabled).toBe(true);
    expect(c.override).toBeNull();
    expect(controlsFor(vague, { control: false, override: false, name: "viewer" }).continueAnyway).toBeNull();
  });
});

describe("ledgerWords", () => {
  it("calls a letter the job never moved 'still in the DLQ' once the job has ended, not 'waiting'", () => {
    expect(ledgerWords("pending", "running")).toBe("waiting");
    expect(ledgerWords("pending", "cancelled")).toBe("not moved, still in the DLQ");
    expect(ledgerWords("interrupted", "succeeded")).toBe("not moved, still in the DLQ");
    expect(ledgerWords("failed", "succeeded")).toBe("failed (still in the DLQ)");
    expect(ledgerWords("moved", "succeeded")).toBe("redriven");
  });
});
