import { describe, expect, it } from "vitest";
import { parseConfig, type IndexingConfig } from "@/lib/config";
import { indexingLineOf, indexingOff, rescanVerdict, type IndexStateView } from "./indexing-policy";

const base = { connections: [{ kind: "rabbitmq", id: "prod-rabbit", url: "amqp://rabbit.internal:5672" }] };
const indexing = (over: Record<string, unknown> = {}): IndexingConfig =>
  parseConfig(JSON.stringify({ ...base, triage: { indexing: over } })).triage.indexing;

const now = new Date("2026-01-01T12:00:00Z");
const ago = (s: number) => new Date(now.getTime() - s * 1000);
const state = (over: Partial<IndexStateView> = {}): IndexStateView => ({
  mode: "tail",
  outcome: "indexed",
  detail: null,
  roundAt: ago(5),
  indexedAt: ago(5),
  rescanAt: null,
  ...over,
});

describe("indexing config", () => {
  it("is on by default, and a file without a triage section gets the defaults", () => {
    const c = parseConfig(JSON.stringify(base)).triage.indexing;
    expect(c).toMatchObject({ enabled: true, intervalSeconds: 300, disabled: [] });
    expect(indexingOff(c, "prod-rabbit", "orders.dlq")).toBe(false);
  });

  it("is switched off per connection and DLQ pattern, or as a whole", () => {
    const c = indexing({ disabled: [{ connection: "prod-*", dlqPattern: "payments.*" }] });
    expect(indexingOff(c, "prod-rabbit", "payments.dlq")).toBe(true);
    expect(indexingOff(c, "prod-rabbit", "orders.dlq")).toBe(false);
    expect(indexingOff(c, "staging-rabbit", "payments.dlq")).toBe(false);
    expect(indexingOff(indexing({ enabled: false }), "prod-rabbit", "orders.dlq")).toBe(true);
  });

  it("refuses a pattern that is not a bounded glob", () => {
    expect(() =>
      parseConfig(
        JSON.stringify({ ...base, triage: { indexing: { disabled: [{ connection: "", dlqPattern: "x" }] } } }),
      ),
    ).toThrow(/triage\.indexing\.disabled\.0\.connection/);
  });
});

describe("rescanVerdict", () => {
  const c = indexing({ intervalSeconds: 60, lettersPerMinutePerConnection: 1000 });
  it("waits for the interval since the last rescan", () => {
    expect(rescanVerdict(c, { depth: 10, lastRescanAt: ago(30), usedLastMinute: 0, now })).toMatchObject({
      go: false,
      retry: true,
    });
    expect(rescanVerdict(c, { depth: 10, lastRescanAt: ago(60), usedLastMinute: 0, now })).toEqual({ go: true });
    expect(rescanVerdict(c, { depth: 10, lastRescanAt: null, usedLastMinute: 0, now })).toEqual({ go: true });
  });

  it("keeps a connection's rescans within its letters per minute, and never rescans a DLQ deeper than that", () => {
    expect(rescanVerdict(c, { depth: 600, lastRescanAt: null, usedLastMinute: 500, now })).toMatchObject({
      go: false,
      retry: true,
    });
    expect(rescanVerdict(c, { depth: 500, lastRescanAt: null, usedLastMinute: 500, now })).toEqual({ go: true });
    expect(rescanVerdict(c, { depth: 1001, lastRescanAt: null, usedLastMinute: 0, now })).toMatchObject({
      go: false,
      retry: false,
      why: expect.stringContaining("1,001 letters"),
    });
  });
});

describe("the DLQ page's indexing line", () => {
  const line = (over: Partial<Parameters<typeof indexingLineOf>[0]> = {}) =>
    indexingLineOf({
      cfg: indexing(),
      connectionId: "prod-rabbit",
      queue: "orders.dlq",
      readRisk: false,
      state: state(),
      ...over,
    });

  it("says when the DLQ was last indexed", () => {
    expect(line()).toEqual({ kind: "on", text: "Indexed continuously, last indexed", at: ago(5).toISOString() });
  });

  it("says the config switched it off, before anything else", () => {
    const cfg = indexing({ disabled: [{ connection: "*", dlqPattern: "orders.*" }] });
    expect(line({ cfg, readRisk: true })).toMatchObject({ kind: "off", text: "Indexing off by config", at: null });
  });

  it("says a DLQ with a read risk is not indexed on its own, also when the broker did not answer but the last round found the risk", () => {
    expect(line({ readRisk: true })).toMatchObject({
      kind: "risk",
      text: "Not indexed on its own: reading it has a risk",
    });
    expect(line({ readRisk: null, state: state({ outcome: "risk", indexedAt: null }) })).toMatchObject({
      kind: "risk",
    });
  });

  it("never claims an index it has not made: not yet, queued, failed, too deep", () => {
    expect(line({ state: null })).toMatchObject({ kind: "pending", at: null });
    expect(line({ state: state({ outcome: "queued", indexedAt: null, mode: "rescan" }) })).toMatchObject({
      kind: "pending",
      text: "Indexed continuously, first rescan queued",
    });
    expect(line({ state: state({ outcome: "failed", detail: "RabbitMQ did not answer" }) })).toMatchObject({
      kind: "failed",
      text: expect.stringContaining("RabbitMQ did not answer"),
      at: ago(5).toISOString(),
    });
    expect(
      line({ state: state({ outcome: "over-budget", detail: "30,000 letters is more than…", indexedAt: null }) }),
    ).toMatchObject({
      kind: "over-budget",
      at: null,
    });
  });
});
