/** URLs of the operations views; every view is reproducible from its URL. Pure. */
import type { ChartRange } from "./samples";

const seg = encodeURIComponent;

export const CHART_RANGE_NAMES: readonly ChartRange[] = ["hour", "day", "week"];
export const DEFAULT_RANGE: ChartRange = "day";

/** A DLQ's health page (figures, charts, findings); the default range is left out. */
export function healthHref(connectionId: string, queue: string, range: ChartRange = DEFAULT_RANGE): string {
  return `/dlqs/${seg(connectionId)}/${seg(queue)}/health${range === DEFAULT_RANGE ? "" : `?range=${range}`}`;
}

/** `?range=` → a range; null when it is not one (absent: the default). */
export function parseRange(v: unknown): ChartRange | null {
  if (v === undefined || v === null || v === "") return DEFAULT_RANGE;
  return typeof v === "string" && (CHART_RANGE_NAMES as readonly string[]).includes(v) ? (v as ChartRange) : null;
}

export type FindingState = "open" | "resolved" | "all";
export type FindingSeverityName = "critical" | "warning" | "info";

export interface FindingsView {
  state: FindingState;
  severity: FindingSeverityName | null;
  connection: string | null;
  dlq: string | null;
}

export const EMPTY_FINDINGS_VIEW: FindingsView = { state: "open", severity: null, connection: null, dlq: null };

export function findingsHref(v: Partial<FindingsView> = {}): string {
  const p = new URLSearchParams();
  if (v.state && v.state !== "open") p.set("state", v.state);
  if (v.severity) p.set("severity", v.severity);
  if (v.connection) p.set("connection", v.connection);
  if (v.dlq) p.set("dlq", v.dlq);
  const qs = p.toString();
  return `/findings${qs ? `?${qs}` : ""}`;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The findings page's search params; unknown values are an error to show, not silently dropped. */
export function parseFindingsParams(
  sp: Record<string, string | string[] | undefined>,
): { ok: true; value: FindingsView } | { ok: false; message: string } {
  const state = one(sp.state) || "open";
  if (!["open", "resolved", "all"].includes(state))
    return { ok: false, message: "state must be open, resolved or all." };
  const severity = one(sp.severity) || null;
  if (severity !== null && !["critical", "warning", "info"].includes(severity))
    return { ok: false, message: "severity must be critical, warning or info." };
  const connection = one(sp.connection)?.trim() || null;
  const dlq = one(sp.dlq)?.trim() || null;
  if ((connection?.length ?? 0) > 100 || (dlq?.length ?? 0) > 1000)
    return { ok: false, message: "The connection or DLQ name is too long." };
  return {
    ok: true,
    value: { state: state as FindingState, severity: severity as FindingSeverityName | null, connection, dlq },
  };
}
