-- Issue 31: the token rate limit keeps each token's two windows in one row, so one conditional
-- upsert holding that row's lock decides every request (lib/api-tokens/rate-store.ts).

-- CreateTable
CREATE TABLE "api_token_rates" (
    "token_id" UUID NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "previous" INTEGER NOT NULL,
    "current" INTEGER NOT NULL,
    "admitted" BOOLEAN NOT NULL,

    CONSTRAINT "api_token_rates_pkey" PRIMARY KEY ("token_id")
);

-- Carry each token's latest window, and the one just before it, over: a deploy does not reset a limit.
-- (The old rows were always one minute apart, the only window length there has been.)
INSERT INTO "api_token_rates" ("token_id", "window_start", "previous", "current", "admitted")
SELECT latest."token_id", latest."window_start", COALESCE(before."count", 0), latest."count", true
FROM (
    SELECT DISTINCT ON ("token_id") "token_id", "window_start", "count"
    FROM "api_token_windows"
    ORDER BY "token_id", "window_start" DESC
) latest
LEFT JOIN "api_token_windows" before
    ON before."token_id" = latest."token_id" AND before."window_start" = latest."window_start" - INTERVAL '1 minute';

-- DropTable
DROP TABLE "api_token_windows";
