/**
 * Where browsers report Content-Security-Policy violations (the policy's report-uri). One bounded
 * log line per report, with the directive and the blocked source's origin only (no samples, no query
 * strings): a violation on our own pages means a page or a library needs the nonce, or an attack.
 * Takes no action and reads no session, so it needs no origin check.
 */
import { readCapped } from "@/lib/http/read-capped";
import { processState } from "@/lib/process-state";

export const dynamic = "force-dynamic";

const MAX_BODY = 16 * 1024;

function originOnly(v: unknown): string {
  if (typeof v !== "string" || !v) return "";
  if (!v.includes(":")) return v.slice(0, 40); // "inline", "eval", "self"...
  try {
    const u = new URL(v);
    return u.protocol === "data:" || u.protocol === "blob:" ? u.protocol : `${u.origin}${u.pathname}`.slice(0, 200);
  } catch {
    return v.slice(0, 40);
  }
}

/** Log lines per minute per process: a flood of reports cannot flood the log. */
const MAX_LINES_PER_MINUTE = 120;
const logBudget = processState("csp-report-log", () => ({ windowStart: 0, lines: 0, dropped: 0 }));

function mayLog(): boolean {
  const now = Date.now();
  if (now - logBudget.windowStart >= 60_000) {
    if (logBudget.dropped > 0)
      console.warn(`csp-violation: ${logBudget.dropped} more report(s) in the last minute were not logged`);
    Object.assign(logBudget, { windowStart: now, lines: 0, dropped: 0 });
  }
  if (logBudget.lines >= MAX_LINES_PER_MINUTE) {
    logBudget.dropped++;
    return false;
  }
  logBudget.lines++;
  return true;
}

export async function POST(req: Request) {
  const text = await readCapped(req, MAX_BODY).catch(() => "");
  if (text === null) return new Response(null, { status: 413 });
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const list = Array.isArray(body) ? body : [body];
    for (const item of list.slice(0, 5)) {
      if (!mayLog()) break;
      const r = ((item as Record<string, unknown>)["csp-report"] ??
        (item as Record<string, unknown>).body ??
        item) as Record<string, unknown>;
      const directive = String(r["effective-directive"] ?? r.effectiveDirective ?? r["violated-directive"] ?? "").slice(
        0,
        60,
      );
      const page = originOnly(r["document-uri"] ?? r.documentURL);
      const blocked = originOnly(r["blocked-uri"] ?? r.blockedURL);
      console.warn(
        `csp-violation directive=${JSON.stringify(directive)} page=${JSON.stringify(page)} blocked=${JSON.stringify(blocked)}`,
      );
    }
  } catch {
    /* not a report */
  }
  return new Response(null, { status: 204 });
}
