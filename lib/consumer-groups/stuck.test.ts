import { describe, expect, it } from "vitest";
import { memberLabel, nextSince, stuckForMs } from "./stuck";

const t0 = new Date("2026-12-02T10:00:00Z");
const t1 = new Date("2026-12-02T10:01:00Z");

describe("nextSince", () => {
  it("keeps the previous since while the committed offset stays put with lag", () => {
    expect(nextSince({ committed: 7n, lag: 3n, since: t0 }, { committed: 7n, lag: 5n }, t1)).toEqual(t0);
  });

  it("a partition that never committed, with lag in both samples, counts from its first sample", () => {
    expect(nextSince({ committed: null, lag: 3n, since: t0 }, { committed: null, lag: 4n }, t1)).toEqual(t0);
  });

  it("starts a new run when the committed offset moved, forwards or back", () => {
    expect(nextSince({ committed: 7n, lag: 3n, since: t0 }, { committed: 8n, lag: 2n }, t1)).toEqual(t1);
    expect(nextSince({ committed: 7n, lag: 3n, since: t0 }, { committed: 5n, lag: 5n }, t1)).toEqual(t1);
    expect(nextSince({ committed: null, lag: 3n, since: t0 }, { committed: 0n, lag: 3n }, t1)).toEqual(t1);
    expect(nextSince({ committed: 0n, lag: 3n, since: t0 }, { committed: null, lag: 3n }, t1)).toEqual(t1);
  });

  it("starts a new run after a sample without lag (caught up in between), or without a previous row", () => {
    expect(nextSince({ committed: 7n, lag: 0n, since: null }, { committed: 7n, lag: 1n }, t1)).toEqual(t1);
    expect(nextSince(null, { committed: 7n, lag: 1n }, t1)).toEqual(t1);
    expect(nextSince({ committed: 7n, lag: 2n, since: null }, { committed: 7n, lag: 1n }, t1)).toEqual(t1);
  });

  it("is null without lag", () => {
    expect(nextSince({ committed: 7n, lag: 3n, since: t0 }, { committed: 7n, lag: 0n }, t1)).toBeNull();
    expect(nextSince(null, { committed: 9n, lag: 0n }, t1)).toBeNull();
  });
});

describe("stuckForMs", () => {
  it("is the time since the run began once it reaches the threshold, else null", () => {
    expect(stuckForMs({ lag: 1n, since: t0 }, t1, 60_000)).toBe(60_000);
    expect(stuckForMs({ lag: 1n, since: t0 }, t1, 60_001)).toBeNull();
    expect(stuckForMs({ lag: 0n, since: t0 }, t1, 1)).toBeNull();
    expect(stuckForMs({ lag: 5n, since: null }, t1, 1)).toBeNull();
  });
});

describe("memberLabel", () => {
  it("is client id and host, without kafkajs's leading slash", () => {
    expect(memberLabel({ clientId: "payments", host: "/10.0.0.7" })).toBe("payments/10.0.0.7");
  });
});
