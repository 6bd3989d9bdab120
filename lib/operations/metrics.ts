import "server-only";
import { timingSafeEqual, createHash } from "node:crypto";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import type { DlqOverviewRow } from "./queries";
import { overviewRows } from "./queries";
import { ownerResolver } from "./owners";

/**
 * Prometheus exposition of every sampled DLQ's last figures (DESIGN: "It exposes Prometheus
 * metrics"). Read from dlq_status, so a scrape costs one query and never a broker call. A scraper
 * presents DLQ_METRICS_TOKEN as a bearer token; a signed-in user with ops:read may look too.
 */

/** Label values escaped as the text format requires (backslash, double quote, newline). */
export function labelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

interface Family {
  name: string;
  help: string;
  value: (r: DlqOverviewRow, now: number) => number | null;
}

const FAMILIES: Family[] = [
  { name: "dlq_console_dlq_depth", help: "Letters in the DLQ at the last sampling round.", value: (r) => r.depth },
  { name: "dlq_console_dlq_inflow_per_minute", help: "Letters entering the DLQ per minute over the last hour.", value: (r) => r.inflowPerMin },
  {
    name: "dlq_console_dlq_oldest_age_seconds",
    help: "Age of the oldest letter (from the broker, or from the last scan).",
    value: (r, now) => (r.oldestAt ? Math.max(0, (now - Date.parse(r.oldestAt)) / 1000) : null),
  },
  {
    name: "dlq_console_dlq_retention_deadline_seconds",
    help: "Seconds until the oldest letter is lost to the DLQ's retention (negative: overdue); absent when letters are kept until removed.",
    value: (r, now) => (r.deadlineAt ? (Date.parse(r.deadlineAt) - now) / 1000 : null),
  },
  { name: "dlq_console_dlq_open_findings", help: "Open configuration findings about the DLQ.", value: (r) => r.openFindings },
  { name: "dlq_console_dlq_firing_alerts", help: "Alert rules firing for the DLQ.", value: (r) => r.firingAlerts },
  { name: "dlq_console_dlq_sample_up", help: "1 when the last round reached the DLQ's broker, else 0.", value: (r) => (r.error ? 0 : 1) },
  { name: "dlq_console_dlq_sampled_timestamp_seconds", help: "When the DLQ was last sampled (Unix time).", value: (r) => Date.parse(r.sampledAt) / 1000 },
];

export function exposition(rows: DlqOverviewRow[], now = Date.now()): string {
  const live = rows.filter((r) => !r.missingSince);
  const out: string[] = [];
  for (const f of FAMILIES) {
    out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} gauge`);
    for (const r of live) {
      const v = f.value(r, now);
      if (v === null || !Number.isFinite(v)) continue;
      const labels = [`connection="${labelValue(r.connectionId)}"`, `queue="${labelValue(r.queue)}"`, `owner="${labelValue(r.owner?.team ?? "")}"`];
      out.push(`${f.name}{${labels.join(",")}} ${Number.isInteger(v) ? v : v.toFixed(3)}`);
    }
  }
  return out.join("\n") + "\n";
}

/** The bearer token matches DLQ_METRICS_TOKEN (compared in constant time); false when none is set. */
export function scraperTokenMatches(header: string | null, token = process.env.DLQ_METRICS_TOKEN): boolean {
  if (!token || !header?.startsWith("Bearer ")) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(header.slice("Bearer ".length)), digest(token));
}

/** For a scraper that presented the token (no actor), or a signed-in user with ops:read. */
export async function renderMetrics(who: { actor: Actor; meta: RequestMeta } | "scraper"): Promise<string> {
  if (who !== "scraper") await authorize(who.actor, "ops:read", { action: "ops.metrics", meta: who.meta });
  return exposition(await overviewRows(await ownerResolver()));
}

export const METRICS_UNAUTHORIZED = () =>
  new AppError("unauthorized:session", { userMessage: "Send the metrics token (Authorization: Bearer <DLQ_METRICS_TOKEN>), or sign in." });
