import { describe, expect, it } from "vitest";
import { exposition, scraperTokenMatches } from "./metrics";
import type { DlqOverviewRow } from "./queries";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const row = (queue: string, over: Partial<DlqOverviewRow> = {}): DlqOverviewRow => ({
  connectionId: "local-rabbitmq",
  queue,
  queueType: "classic",
  sampledAt: "2026-12-02T09:59:30.000Z",
  depth: 3,
  inflowPerMin: 0.5,
  oldestAt: "2026-12-02T09:00:00.000Z",
  oldestSource: "broker",
  oldestAsOf: null,
  retentionMs: 7200_000,
  deadlineAt: "2026-12-02T11:00:00.000Z",
  error: null,
  missingSince: null,
  owner: { team: "Payments", contact: "#pay", source: "config" },
  openFindings: 1,
  worstFinding: "warning",
  firingAlerts: 0,
  lastAlertAt: null,
  trend: [],
  ...over,
});

describe("exposition", () => {
  it("writes one gauge line per DLQ and family, with the figures as of now", () => {
    const text = exposition([row("orders.dlq")], NOW);
    expect(text).toContain('dlq_console_dlq_depth{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 3\n');
    expect(text).toContain('dlq_console_dlq_oldest_age_seconds{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 3600\n');
    expect(text).toContain('dlq_console_dlq_retention_deadline_seconds{connection="local-rabbitmq",queue="orders.dlq",owner="Payments"} 3600\n');
    expect(text).toContain("# TYPE dlq_console_dlq_depth gauge\n");
  });
  it("escapes hostile label values so a DLQ name cannot forge a line or a label", () => {
    const text = exposition([row('evil"} 1\ndlq_console_dlq_depth{queue="x\\', { owner: null })], NOW);
    expect(text).toContain('queue="evil\\"} 1\\ndlq_console_dlq_depth{queue=\\"x\\\\"');
    expect(text.split("\n").filter((l) => l.startsWith("dlq_console_dlq_depth{"))).toHaveLength(1);
  });
  it("leaves out unknown figures and DLQs the broker no longer lists", () => {
    const text = exposition([row("kept", { deadlineAt: null, oldestAt: null }), row("gone", { missingSince: "2026-12-02T09:00:00.000Z" })], NOW);
    expect(text).not.toContain("dlq_console_dlq_retention_deadline_seconds{");
    expect(text).not.toContain("dlq_console_dlq_oldest_age_seconds{");
    expect(text).not.toContain('queue="gone"');
    expect(text).toContain('queue="kept"');
  });
});

describe("scraperTokenMatches", () => {
  it("takes only the configured bearer token, and nothing when none is configured", () => {
    expect(scraperTokenMatches("Bearer s3cret", "s3cret")).toBe(true);
    expect(scraperTokenMatches("Bearer s3cre", "s3cret")).toBe(false);
    expect(scraperTokenMatches("s3cret", "s3cret")).toBe(false);
    expect(scraperTokenMatches(null, "s3cret")).toBe(false);
    expect(scraperTokenMatches("Bearer ", "")).toBe(false);
    expect(scraperTokenMatches("Bearer x", undefined)).toBe(false);
  });
});
