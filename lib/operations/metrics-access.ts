import "server-only";
import { createHash, timingSafeEqual } from "node:crypto";
import { parseTrustedProxies, type TrustedProxies } from "@/lib/auth/client-ip";
import { AppError } from "@/lib/errors";

/**
 * Who may scrape /api/metrics without a session: a caller presenting DLQ_METRICS_TOKEN as a bearer
 * token, or one whose address is in DLQ_METRICS_ALLOW. The address is the one the audit log and
 * the sign-in limiter use (lib/auth/client-ip.ts): the socket's peer, or, only when that peer is a
 * trusted proxy (DLQ_TRUSTED_PROXIES), what it forwarded. A client's own X-Forwarded-For never
 * opens the network check. Anyone else needs a signed-in session with ops:read.
 */

/** The bearer token matches DLQ_METRICS_TOKEN (compared in constant time); false when none is set. */
export function scraperTokenMatches(header: string | null, token = process.env.DLQ_METRICS_TOKEN): boolean {
  if (!token || !header?.startsWith("Bearer ")) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(header.slice("Bearer ".length)), digest(token));
}

/** DLQ_METRICS_ALLOW entries: addresses and CIDR ranges, IPv4 and IPv6, separated by commas or spaces. */
export function metricsAllowEntries(env: Record<string, string | undefined> = process.env): string[] {
  return (env.DLQ_METRICS_ALLOW ?? "").split(/[\s,]+/).filter(Boolean);
}

let cached: { raw: string; allowed: TrustedProxies } | null = null;

/** DLQ_METRICS_ALLOW parsed once per value; entries that are not an address or range are reported once and ignored. */
export function metricsAllowList(env: Record<string, string | undefined> = process.env): TrustedProxies {
  const raw = env.DLQ_METRICS_ALLOW ?? "";
  if (cached?.raw === raw) return cached.allowed;
  // Same grammar as DLQ_TRUSTED_PROXIES, so the same parser (a BlockList of addresses and ranges).
  const allowed = parseTrustedProxies(metricsAllowEntries(env));
  if (allowed.invalid.length)
    console.warn(
      `[metrics] DLQ_METRICS_ALLOW: ignored entries that are not an address or CIDR range: ${allowed.invalid.join(", ")}`,
    );
  cached = { raw, allowed };
  return allowed;
}

/**
 * The scraper's way in, or null when the caller must have a session: the token, else the client
 * address (as lib/auth/client-ip.ts resolved it) inside DLQ_METRICS_ALLOW.
 */
export function scraperAccess(
  authorization: string | null,
  clientIp: string | null,
  env: Record<string, string | undefined> = process.env,
): "token" | "network" | null {
  if (scraperTokenMatches(authorization, env.DLQ_METRICS_TOKEN)) return "token";
  if (clientIp && metricsAllowList(env).has(clientIp)) return "network";
  return null;
}

export const METRICS_UNAUTHORIZED = () =>
  new AppError("unauthorized:session", {
    userMessage:
      "Send the metrics token (Authorization: Bearer <DLQ_METRICS_TOKEN>), scrape from a network in DLQ_METRICS_ALLOW, or sign in.",
  });
