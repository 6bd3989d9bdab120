import { describe, expect, it } from "vitest";
import type { EvidenceState, SampleEvidence } from "@/lib/brokers/target-readers";
import {
  decideVerdict,
  evidenceLine,
  nobodyReadsWarning,
  sampleWatchOf,
  unknownEvidence,
  verdictSentence,
} from "./sample-verdict";

const ev = (target: string, state: EvidenceState, text = `${target}: ${state}.`): SampleEvidence => ({
  target,
  state,
  text,
  readers: { target, count: state === "no_reader" ? 0 : 1, names: [], summary: "" },
});

describe("decideVerdict", () => {
  it("returned whenever sample letters came back, whatever the evidence", () => {
    expect(decideVerdict(1, [ev("orders", "taken")])).toBe("returned");
    expect(decideVerdict(2, [ev("orders", "no_reader")])).toBe("returned");
    expect(decideVerdict(1, [])).toBe("returned");
  });

  it("clean only when none came back and every target shows a reader took the copies", () => {
    expect(decideVerdict(0, [ev("orders", "taken")])).toBe("clean");
    expect(decideVerdict(0, [ev("orders", "taken"), ev("payments", "taken")])).toBe("clean");
  });

  it("inconclusive when a target has no reader, the copies may still wait, or the broker cannot tell", () => {
    for (const state of ["waiting", "no_reader", "unknown"] as const) {
      expect(decideVerdict(0, [ev("orders", state)])).toBe("inconclusive");
      expect(decideVerdict(0, [ev("orders", "taken"), ev("payments", state)])).toBe("inconclusive");
    }
  });

  it("inconclusive when no copy reached a target the console could look at", () => {
    expect(decideVerdict(0, [])).toBe("inconclusive");
  });
});

describe("verdictSentence", () => {
  const base = { returned: 0, size: 2, watchSeconds: 30 };

  it("an inconclusive verdict says why, with the evidence per target", () => {
    const text = verdictSentence({
      ...base,
      verdict: "inconclusive",
      evidence: [ev("demo.orders", "no_reader", 'No consumer on queue "demo.orders": nothing takes the copies.')],
    });
    expect(text).toBe(
      'Sample inconclusive: none of the 2 sample letters came back within 30 s, but nothing shows a reader took them (No consumer on queue "demo.orders": nothing takes the copies). Start the rest only after checking the target\'s consumers, or continue anyway with a reason.',
    );
  });

  it("says so when no copy reached a target", () => {
    expect(verdictSentence({ ...base, verdict: "inconclusive", evidence: [] })).toContain(
      "no sample letter reached a target the console could look at",
    );
  });

  it("a clean verdict names what the reader did; a returned one keeps today's words", () => {
    expect(
      verdictSentence({
        ...base,
        verdict: "clean",
        evidence: [ev("orders", "taken", "2 acknowledged by 1 consumer.")],
      }),
    ).toBe(
      "Sample done: clean. None of the 2 sample letters came back within 30 s, and a reader took them (2 acknowledged by 1 consumer). Start the rest when ready.",
    );
    expect(verdictSentence({ ...base, verdict: "returned", returned: 1, evidence: [] })).toBe(
      "Sample returned 1 of 2 letters within 30 s: the fix may not be working. Starting the rest now needs an admin and a reason.",
    );
  });

  it("joins the evidence of several targets", () => {
    expect(evidenceLine([ev("a", "taken", "A taken."), ev("b", "waiting", "B waits. ")])).toBe("A taken; B waits");
  });
});

describe("the form's warning and unknown evidence", () => {
  it("warns only when the broker reports nobody", () => {
    expect(nobodyReadsWarning({ target: "demo.orders", count: 0, names: [], summary: "" }, "queue")).toBe(
      "Nobody consumes queue demo.orders: a sample sent there cannot come back, so its verdict will be inconclusive.",
    );
    expect(nobodyReadsWarning({ target: "orders", count: 2, names: [], summary: "" }, "queue")).toBeNull();
    expect(nobodyReadsWarning({ target: "orders", count: null, names: [], summary: "" }, "queue")).toBeNull();
  });

  it("unknown evidence carries the reason as its text and summary", () => {
    expect(unknownEvidence("t", "Kafka cannot tell.")).toEqual({
      target: "t",
      state: "unknown",
      text: "Kafka cannot tell.",
      readers: { target: "t", count: null, names: [], summary: "Kafka cannot tell." },
    });
  });

  it("reads a stored watch record, and nothing from a plan without one", () => {
    expect(sampleWatchOf(null)).toBeNull();
    expect(sampleWatchOf({})).toBeNull();
    expect(sampleWatchOf({ marks: [{ target: "q", mark: { ready: 1 }, error: null }] })).toEqual({
      marks: [{ target: "q", mark: { ready: 1 }, error: null }],
      evidence: null,
    });
  });
});
