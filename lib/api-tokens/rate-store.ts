import "server-only";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { retryAfterMs, windowOf, type RateDecision, type TokenRatePolicy } from "./rate";

/**
 * One statement decides a request: it takes the token's row lock (api_token_rates, one row per
 * token), rolls the row into the request's window when that is newer, and counts the request only
 * if `admits` (lib/api-tokens/rate.ts, written here in integers) holds for the counts it now holds.
 * Requests racing on any number of connections and replicas queue on that lock, and each sees the
 * count left by the one before, so no more than the limit get through.
 *
 * A request whose window is older than the row's (it was stamped before a boundary that others,
 * stamped after it, have already crossed) is decided in the row's window, as if it came at that
 * window's start, where the previous window weighs most: a late request can never add to a window
 * that later ones have already read.
 *
 * $1 token id, $2 the request's window start (epoch ms), $3 ms into that window, $4 window ms, $5 limit.
 */
const TAKE_SQL = `
INSERT INTO api_token_rates AS t (token_id, window_start, previous, current, admitted)
VALUES ($1::uuid, to_timestamp($2::double precision / 1000), 0, 1, true)
ON CONFLICT (token_id) DO UPDATE SET (window_start, previous, current, admitted) = (
  SELECT w.window_start, w.previous, w.current + w.admit::int, w.admit
  FROM (
    SELECT r.*, (r.current + 1)::bigint * $4::int + r.previous::bigint * ($4::int - r.elapsed) <= $5::bigint * $4::int AS admit
    FROM (
      SELECT
        GREATEST(t.window_start, excluded.window_start) AS window_start,
        CASE
          WHEN excluded.window_start <= t.window_start THEN t.previous
          WHEN t.window_start = excluded.window_start - $4::int * INTERVAL '1 millisecond' THEN t.current
          ELSE 0
        END AS previous,
        CASE WHEN excluded.window_start <= t.window_start THEN t.current ELSE 0 END AS current,
        CASE WHEN excluded.window_start < t.window_start THEN 0 ELSE $3::int END AS elapsed
    ) r
  ) w
)
RETURNING window_start, previous, current, admitted`;

interface RateRow {
  window_start: Date;
  previous: number;
  current: number;
  admitted: boolean;
}

/**
 * Counts one request of a token against its rate limit, or refuses it (refusals are not counted),
 * in one round trip whatever the answer: a refusal's Retry-After comes from the counts the same
 * statement decided on.
 */
export async function takeTokenRequest(
  tokenId: string,
  now: Date,
  policy: TokenRatePolicy,
  db: PrismaClient = getDb(),
): Promise<RateDecision> {
  const { startMs, elapsedMs } = windowOf(now.getTime(), policy);
  const [row] = await db.$queryRawUnsafe<RateRow[]>(
    TAKE_SQL,
    tokenId,
    startMs,
    elapsedMs,
    policy.windowMs,
    policy.limit,
  );
  if (!row) throw new Error("api_token_rates: the upsert returned no row");
  if (row.admitted) return { limited: false };
  // Decided in a later window than the request's own: the wait starts at that window.
  const rowStartMs = row.window_start.getTime();
  const late = Math.max(0, rowStartMs - now.getTime());
  const elapsed = rowStartMs > startMs ? 0 : elapsedMs;
  return { limited: true, retryAfterMs: late + retryAfterMs(row.previous, row.current, elapsed, policy) };
}
