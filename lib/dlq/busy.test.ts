import { describe, expect, it } from "vitest";
import { busyWords, type DlqReader } from "./busy";

const NOW = new Date("2031-05-06T07:08:09Z");
const reader = (o: Partial<DlqReader> = {}): DlqReader => ({
  id: "j1",
  kind: "scan",
  state: "running",
  startedAt: new Date(NOW.getTime() - 90_000),
  indexer: false,
  read: 12_000,
  total: 40_000,
  ...o,
});

describe("busyWords: a page refused behind another read says who reads the queue", () => {
  it("names an operator's scan, when it started and how far it got", () => {
    expect(busyWords("orders.dlq", [reader()], NOW)).toBe(
      'Queue "orders.dlq" is being read by a triage scan (started 2031-05-06 07:06:39 UTC · 1 min ago, 12,000 of 40,000 letters read). Reads of this queue take turns (a read holds the letters it took until it ends), so this page waited for its turn and was refused; nothing was read or changed. Reload this page once it ends.',
    );
  });

  it("tells the indexer's rescan from an operator's, and a cancelling job from a running one", () => {
    const w = busyWords("orders.dlq", [reader({ indexer: true, state: "cancelling", total: null, read: 300 })], NOW);
    expect(w).toContain("is being read by the indexer's triage scan (started");
    expect(w).toContain("300 letters read so far");
    expect(w).toContain("It is being cancelled and stops at its next batch.");
  });

  it("names a redrive, and counts the other jobs that hold the queue", () => {
    const w = busyWords(
      "orders.dlq",
      [reader({ kind: "redrive", read: null, total: null }), reader({ id: "j2" })],
      NOW,
    );
    expect(w).toContain("is being read by a redrive (started 2031-05-06 07:06:39 UTC · 1 min ago).");
    expect(w).toContain("1 more of this console's jobs hold it too.");
  });

  it("says the page did not wait when it gave its turn up behind a scan", () => {
    const w = busyWords("orders.dlq", [reader({ indexer: true })], NOW, true);
    expect(w).toBe(
      'Queue "orders.dlq" is being read by the indexer\'s triage scan (started 2031-05-06 07:06:39 UTC · 1 min ago, 12,000 of 40,000 letters read). Reads of this queue take turns (a read holds the letters it took until it ends), and a triage scan holds the queue until it has read every letter, so this page did not wait for its turn; nothing was read or changed. Reload this page once it ends.',
    );
    expect(w).not.toContain("waited");
  });

  it("says no job of this console reads it when none does (a page, or another console)", () => {
    expect(busyWords("orders.dlq", [], NOW)).toMatch(
      /^Queue "orders.dlq" is being read right now by another page, job or replica of the console \(none of this console's jobs is reading it\)\./,
    );
  });
});
