import { AppError, asAppError } from "@/lib/errors";

/**
 * Per-token rate limit: a sliding window estimated from two fixed windows (the current one and the
 * one before), both counts kept in one database row per token so every replica adds to the same
 * figure (lib/api-tokens/rate-store.ts). A request is let through while
 *
 *     previous × (time left of the current window / window) + current + 1 ≤ limit
 *
 * which smooths the burst a plain fixed window allows at its edge (up to twice the limit), with one
 * row per token instead of one per request. Refused requests are not counted, so a client that
 * waits as told gets through when told.
 *
 * The decision is exact under concurrency: one statement holding the token's row lock reads both
 * counts and adds to one, so of any number of simultaneous requests, from any number of replicas,
 * exactly as many get through as this formula allows, one after another.
 */
export interface TokenRatePolicy {
  /** Requests per window. */
  limit: number;
  windowMs: number;
}

export const DEFAULT_REQUESTS_PER_MINUTE = 300;

/** DLQ_API_RATE_PER_MINUTE (default 300, at most 100,000) requests per token per minute. */
export function tokenRatePolicy(env: Record<string, string | undefined> = process.env): TokenRatePolicy {
  const raw = env.DLQ_API_RATE_PER_MINUTE?.trim();
  if (!raw) return { limit: DEFAULT_REQUESTS_PER_MINUTE, windowMs: 60_000 };
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1 || n > 100_000) {
    throw new AppError("internal:config", {
      userMessage: `DLQ_API_RATE_PER_MINUTE must be a whole number of requests from 1 to 100000 (got "${raw.slice(0, 40)}").`,
    });
  }
  return { limit: n, windowMs: 60_000 };
}

/** The fixed window `nowMs` falls in: its start (epoch ms) and how far into it `nowMs` is. */
export function windowOf(nowMs: number, policy: TokenRatePolicy): { startMs: number; elapsedMs: number } {
  const startMs = Math.floor(nowMs / policy.windowMs) * policy.windowMs;
  return { startMs, elapsedMs: nowMs - startMs };
}

/**
 * How many requests the current window may hold in all, given the previous window's count: a
 * request is let through when the current count is below this (so 0 or less: none now). Whole
 * numbers throughout (times are whole ms), as the database computes it in rate-store.ts:
 * `(current + 1) × window + previous × left ≤ limit × window`.
 */
export function windowCapacity(previous: number, elapsedMs: number, policy: TokenRatePolicy): number {
  const left = Math.max(0, policy.windowMs - elapsedMs);
  return Math.floor((policy.limit * policy.windowMs - previous * left) / policy.windowMs);
}

/**
 * For a refused request: how long until one more would be let through, if no other request is
 * made meanwhile. Within the current window if the previous window's share fades enough in time,
 * else into the next window, where the current count becomes the previous one. At least 1 s.
 */
export function retryAfterMs(previous: number, current: number, elapsedMs: number, policy: TokenRatePolicy): number {
  const W = policy.windowMs;
  const left = Math.max(0, W - elapsedMs);
  let wait: number;
  if (current + 1 <= policy.limit && previous > 0) {
    // previous × (left − t) / W + current + 1 ≤ limit
    wait = left - (W * (policy.limit - current - 1)) / previous;
  } else {
    // In the next window: current × (W − t') / W + 1 ≤ limit
    const next = current > 0 && policy.limit - 1 < current ? W * (1 - (policy.limit - 1) / current) : 0;
    wait = left + next;
  }
  return Math.max(1000, Math.ceil(wait / 1000) * 1000);
}

export type RateDecision = { limited: false } | { limited: true; retryAfterMs: number };

/** The pure decision for one request, given both windows' counts (rate-store.ts makes it in SQL). */
export function decideRate(
  previous: number,
  current: number,
  elapsedMs: number,
  policy: TokenRatePolicy,
): RateDecision {
  if (current < windowCapacity(previous, elapsedMs, policy)) return { limited: false };
  return { limited: true, retryAfterMs: retryAfterMs(previous, current, elapsedMs, policy) };
}

export const RATE_LIMIT_CODE = "too_many_requests:token" as const;

/**
 * The error a limited request is refused with. Its type maps to 429 in lib/errors.ts; the route
 * layer adds `Retry-After: <retryAfterSeconds>` (see `tokenRateLimitOf`).
 */
export function tokenRateLimitError(retryAfter: number, policy: TokenRatePolicy): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfter / 1000));
  return new AppError(RATE_LIMIT_CODE, {
    message: `API token over ${policy.limit} requests per ${policy.windowMs / 1000} s`,
    userMessage: `Too many requests with this token (at most ${policy.limit} a minute). Retry in ${seconds} s.`,
    details: { retryAfterSeconds: seconds },
  });
}

/** For the route layer: the seconds to put in Retry-After when `e` is a token rate refusal, else null. */
export function tokenRateLimitOf(e: unknown): { retryAfterSeconds: number } | null {
  const err = asAppError(e);
  if (!err || err.code !== RATE_LIMIT_CODE) return null;
  const s = err.details?.retryAfterSeconds;
  return typeof s === "number" && s > 0 ? { retryAfterSeconds: s } : null;
}
