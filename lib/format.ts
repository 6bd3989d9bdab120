/**
 * Formatting shared by server components, client leaves and exports. Pure: no server-only imports.
 */

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

const SHORT: Record<string, string> = { year: "y", month: "mo", day: "d", hour: "h", minute: "min", second: "s" };

function toDate(value: Date | string | number | null | undefined): Date | null {
  if (value === null || value === undefined || value === "") return null;
  const d = value instanceof Date ? value : new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** "12 min ago", "3 h ago", "in 5 s"; "—" when unknown. Stable output for a given `now`. */
export function formatRelative(
  value: Date | string | number | null | undefined,
  now: Date | number = Date.now(),
): string {
  const d = toDate(value);
  if (!d) return "—";
  const nowMs = typeof now === "number" ? now : now.getTime();
  const diffS = Math.round((d.getTime() - nowMs) / 1000);
  const abs = Math.abs(diffS);
  if (abs < 5) return "just now";
  for (const [unit, secs] of UNITS) {
    if (abs >= secs) {
      const n = Math.floor(abs / secs);
      const text = `${n} ${SHORT[unit]}`;
      return diffS < 0 ? `${text} ago` : `in ${text}`;
    }
  }
  return "just now";
}

/**
 * The console's one way of writing a time: ISO-8601 in UTC, "2025-01-31 14:05:09 UTC", with the
 * relative time beside it where a clock is at hand (`formatWhen`). Tables show the relative part
 * and carry the whole on hover; detail pages, tooltips, charts and exports write it out.
 */
export function formatUtc(value: Date | string | number | null | undefined): string {
  const d = toDate(value);
  if (!d) return "";
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** "2025-01-31 14:05:09 UTC · 12 min ago"; "—" when unknown. Stable output for a given `now`. */
export function formatWhen(value: Date | string | number | null | undefined, now: Date | number = Date.now()): string {
  const d = toDate(value);
  if (!d) return "—";
  return `${formatUtc(d)} · ${formatRelative(d, now)}`;
}

/** A broker's timestamp value (ISO-8601, possibly with milliseconds) as the console writes times. */
export function formatTimestampValue(iso: string): string {
  const d = toDate(iso);
  if (!d) return iso;
  const ms = d.getUTCMilliseconds();
  // Keep milliseconds where the broker recorded them: two records of one second stay apart.
  return ms ? `${d.toISOString().slice(0, 23).replace("T", " ")} UTC` : formatUtc(d);
}

/**
 * A time axis tick in UTC, 24-hour: "14:05" within a day, "01-31 14:00" over longer spans (a week's
 * axis needs the day), in the same order as `formatUtc`.
 */
export function formatAxisTime(epochSeconds: number, spanSeconds: number): string {
  const iso = new Date(epochSeconds * 1000).toISOString();
  return spanSeconds > 86_400 ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

/** "0 B", "512 B", "1.5 KB", "5.0 MB" (binary units, one decimal above bytes). */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n) || n < 0) return "—";
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** Thousands separators, "—" for unknown. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return "—";
  return new Intl.NumberFormat("en-US").format(n);
}

/**
 * "1 letter", "5 letters", or for a count that stopped at its cap "at least 10,000 letters": a
 * capped count is a lower bound and must never read as the size of the set.
 */
export function formatLetterCount(n: number, atLeast = false): string {
  return `${atLeast ? "at least " : ""}${formatCount(n)} ${n === 1 ? "letter" : "letters"}`;
}

/** Cuts text to `max` characters (by code point), adding an ellipsis when cut. */
export function truncate(text: string | null | undefined, max: number): string {
  if (!text) return "";
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(0, max - 1)).join("")}…`;
}

/** "letters 51–100 of ~1,234"; depth is approximate because the queue moves while we read. */
export function formatRange(offset: number, count: number, depth: number | null): string {
  if (count === 0) return depth === null ? "no letters" : `no letters on this page (of ~${formatCount(depth)})`;
  const from = offset + 1;
  const to = offset + count;
  const of = depth === null ? "" : ` of ~${formatCount(depth)}`;
  return `letters ${formatCount(from)}–${formatCount(to)}${of}`;
}

/**
 * The name of a payload digest as shown: a role that sees a payload masked is shown a keyed digest
 * (`hmac:…`, lib/masking/digest.ts) that no one can recompute from a guessed payload.
 */
export function digestLabel(digest: string): { label: string; title: string } {
  return digest.startsWith("hmac:")
    ? {
        label: "Digest (keyed)",
        title:
          "A keyed digest of the payload: equal payloads have equal digests, but it cannot be compared with a SHA-256 computed elsewhere, so it reveals nothing masked.",
      }
    : { label: "SHA-256", title: "SHA-256 of the payload's bytes as read from the broker." };
}

/**
 * A span of time in at most two units, rounded down: "45 s", "12 min", "3 h 20 min", "2 d 4 h";
 * "—" when unknown or negative. Rounding down errs early, which is the safe side for a deadline.
 */
export function formatSpan(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return "—";
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** "0.25/min", "3/min", "1,200/min"; "—" when unknown. Rates under 10 keep up to two decimals. */
export function formatRate(perMin: number | null | undefined): string {
  if (perMin === null || perMin === undefined || !Number.isFinite(perMin) || perMin < 0) return "—";
  const v = perMin < 10 ? Math.round(perMin * 100) / 100 : Math.round(perMin);
  return `${new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 }).format(v)}/min`;
}
