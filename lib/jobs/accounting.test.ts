import { describe, expect, it } from "vitest";
import { jobEnded, jobResult, leftWords, resultOf, resultOutcome } from "@/lib/jobs/accounting";

describe("jobResult", () => {
  it("is complete only when every selected letter ended as asked", () => {
    const r = jobResult([
      { count: 3, words: "moved", done: true },
      { count: 0, words: "failed and still in the DLQ", done: false },
    ]);
    expect(r).toEqual({ complete: true, left: 0, summary: "3 moved" });
    expect(resultOutcome(r)).toBe("success");
  });

  it("says what is left, in order, instead of a plain success", () => {
    const r = jobResult([
      { count: 2, words: "moved", done: true },
      { count: 1, words: "failed and still in the DLQ", done: false },
      { count: 1, words: "missing (not found when the DLQ was looked through)", done: false },
    ]);
    expect(r.complete).toBe(false);
    expect(r.left).toBe(2);
    expect(r.summary).toBe(
      "2 moved, 1 failed and still in the DLQ, 1 missing (not found when the DLQ was looked through)",
    );
    expect(resultOutcome(r)).toBe("failure");
  });

  it("reads a result back from a job's progress, and none from a job written before results existed", () => {
    const r = jobResult([{ count: 1, words: "discarded", done: true }]);
    expect(resultOf({ read: 1, result: r })).toEqual(r);
    expect(resultOf({ read: 1 })).toBeNull();
    expect(resultOf(null)).toBeNull();
  });
});

describe("leftWords", () => {
  it("letters a running or paused job has not handled are waiting", () => {
    for (const state of ["queued", "running", "paused", "awaiting_go_ahead", "cancelling"]) {
      expect(jobEnded(state)).toBe(false);
      expect(leftWords("redrive", state)).toBe("waiting");
    }
  });

  it("once a job ended, cancelled included, what it did not handle is still in the DLQ", () => {
    expect(leftWords("redrive", "cancelled")).toBe("not moved, still in the DLQ");
    expect(leftWords("redrive", "failed")).toBe("not moved, still in the DLQ");
    expect(leftWords("discard", "cancelled")).toBe("not discarded, still in the DLQ");
    expect(jobEnded("succeeded")).toBe(true);
  });
});
