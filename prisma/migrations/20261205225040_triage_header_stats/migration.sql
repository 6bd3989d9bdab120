-- CreateTable
CREATE TABLE "triage_counted_headers" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "counted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "used_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "triage_counted_headers_pkey" PRIMARY KEY ("connection_id","queue","name")
);

-- CreateTable
CREATE TABLE "triage_header_stats" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "hour" BIGINT NOT NULL,
    "n" INTEGER NOT NULL,
    "first_at" TIMESTAMPTZ(3) NOT NULL,
    "last_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "triage_header_stats_pkey" PRIMARY KEY ("connection_id","queue","name","kind","value","hour")
);

-- Hand-written from here: the triggers that keep triage_header_stats (schema.prisma, TriageHeaderStat).
-- For every header name counted for the letter's DLQ (triage_counted_headers, state 'counted'), the
-- present letters (gone_at NULL): kind 'v' per value (headers->>name: the same expression a grouping
-- by the header reads) and hour of arrival; 't' per value (hour 0); 'n' per hour, those without the
-- header (value ''). Statement triggers with transition tables, as triage_group_stats: one aggregate
-- per statement, and nothing but one probe of a tiny table when no header is counted. A name is added
-- with its counts in one transaction under a SHARE lock on triage_letters (lib/triage/header-stats.ts),
-- so a statement's trigger either sees the name (and its rows were not in the backfill) or its
-- transaction committed before the backfill read the table (and its rows were in it).
-- first_at / last_at only widen ('infinity' / '-infinity' for a delta that adds no letter), so they
-- stay bounds on the present letters' arrivals of the hour whatever leaves.

CREATE FUNCTION triage_header_stats_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM triage_counted_headers WHERE state = 'counted') THEN RETURN NULL; END IF;
  INSERT INTO triage_header_stats AS s (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
    SELECT connection_id, queue, name, kind, value, hour, sum(n),
      COALESCE(min(at) FILTER (WHERE n > 0), 'infinity'), COALESCE(max(at) FILTER (WHERE n > 0), '-infinity')
    FROM (
      SELECT t.connection_id, t.queue, c.name, d.kind, d.value, d.hour, 1 AS n, t.arrived_at AS at
      FROM new_rows t JOIN triage_counted_headers c ON c.connection_id = t.connection_id AND c.queue = t.queue AND c.state = 'counted'
      CROSS JOIN LATERAL (SELECT t.headers->>c.name AS v, (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint AS hour) x
      CROSS JOIN LATERAL (VALUES ('v', x.v, x.hour), ('t', x.v, 0::bigint), ('n', CASE WHEN x.v IS NULL THEN '' END, x.hour)) d(kind, value, hour)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
    ) x
    GROUP BY 1, 2, 3, 4, 5, 6
    -- One order for every writer: concurrent batches lock the rows they add to in the same order.
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (connection_id, queue, name, kind, value, hour) DO UPDATE SET n = s.n + EXCLUDED.n,
      first_at = LEAST(s.first_at, EXCLUDED.first_at), last_at = GREATEST(s.last_at, EXCLUDED.last_at);
  RETURN NULL;
END $$;

CREATE FUNCTION triage_header_stats_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM triage_counted_headers WHERE state = 'counted') THEN RETURN NULL; END IF;
  INSERT INTO triage_header_stats AS s (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
    SELECT connection_id, queue, name, kind, value, hour, sum(n),
      COALESCE(min(at) FILTER (WHERE n > 0), 'infinity'), COALESCE(max(at) FILTER (WHERE n > 0), '-infinity')
    FROM (
      SELECT t.connection_id, t.queue, c.name, d.kind, d.value, d.hour, 1 AS n, t.arrived_at AS at
      FROM new_rows t JOIN triage_counted_headers c ON c.connection_id = t.connection_id AND c.queue = t.queue AND c.state = 'counted'
      CROSS JOIN LATERAL (SELECT t.headers->>c.name AS v, (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint AS hour) x
      CROSS JOIN LATERAL (VALUES ('v', x.v, x.hour), ('t', x.v, 0::bigint), ('n', CASE WHEN x.v IS NULL THEN '' END, x.hour)) d(kind, value, hour)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
      UNION ALL
      SELECT t.connection_id, t.queue, c.name, d.kind, d.value, d.hour, -1 AS n, t.arrived_at AS at
      FROM old_rows t JOIN triage_counted_headers c ON c.connection_id = t.connection_id AND c.queue = t.queue AND c.state = 'counted'
      CROSS JOIN LATERAL (SELECT t.headers->>c.name AS v, (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint AS hour) x
      CROSS JOIN LATERAL (VALUES ('v', x.v, x.hour), ('t', x.v, 0::bigint), ('n', CASE WHEN x.v IS NULL THEN '' END, x.hour)) d(kind, value, hour)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
    ) x
    GROUP BY 1, 2, 3, 4, 5, 6
    -- A rescan rewrites letters as they were: nothing to add. An arrival moved within its hour widens the bounds.
    HAVING sum(n) <> 0 OR min(at) FILTER (WHERE n > 0) < min(at) FILTER (WHERE n < 0)
      OR max(at) FILTER (WHERE n > 0) > max(at) FILTER (WHERE n < 0)
    -- One order for every writer: concurrent batches lock the rows they add to in the same order.
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (connection_id, queue, name, kind, value, hour) DO UPDATE SET n = s.n + EXCLUDED.n,
      first_at = LEAST(s.first_at, EXCLUDED.first_at), last_at = GREATEST(s.last_at, EXCLUDED.last_at);
  RETURN NULL;
END $$;

CREATE FUNCTION triage_header_stats_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM triage_counted_headers WHERE state = 'counted') THEN RETURN NULL; END IF;
  INSERT INTO triage_header_stats AS s (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
    SELECT connection_id, queue, name, kind, value, hour, sum(n),
      COALESCE(min(at) FILTER (WHERE n > 0), 'infinity'), COALESCE(max(at) FILTER (WHERE n > 0), '-infinity')
    FROM (
      SELECT t.connection_id, t.queue, c.name, d.kind, d.value, d.hour, -1 AS n, t.arrived_at AS at
      FROM old_rows t JOIN triage_counted_headers c ON c.connection_id = t.connection_id AND c.queue = t.queue AND c.state = 'counted'
      CROSS JOIN LATERAL (SELECT t.headers->>c.name AS v, (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint AS hour) x
      CROSS JOIN LATERAL (VALUES ('v', x.v, x.hour), ('t', x.v, 0::bigint), ('n', CASE WHEN x.v IS NULL THEN '' END, x.hour)) d(kind, value, hour)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
    ) x
    GROUP BY 1, 2, 3, 4, 5, 6
    -- One order for every writer: concurrent batches lock the rows they add to in the same order.
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (connection_id, queue, name, kind, value, hour) DO UPDATE SET n = s.n + EXCLUDED.n,
      first_at = LEAST(s.first_at, EXCLUDED.first_at), last_at = GREATEST(s.last_at, EXCLUDED.last_at);
  RETURN NULL;
END $$;

-- Few rows, each rewritten by most statements of a counted DLQ (its 't' rows by every batch): vacuumed
-- after a thousand changes, or the probes in hour order walk the dead versions (5,700 pages instead
-- of 53 for the counts of 100 values after one refill at 1,000,000 letters, docs/benchmarks.md).
ALTER TABLE triage_header_stats SET (
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_analyze_scale_factor = 0,
  autovacuum_analyze_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);

CREATE FUNCTION triage_header_stats_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM triage_header_stats;
  RETURN NULL;
END $$;

CREATE TRIGGER triage_header_stats_insert AFTER INSERT ON triage_letters
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_header_stats_on_insert();
CREATE TRIGGER triage_header_stats_update AFTER UPDATE ON triage_letters
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_header_stats_on_update();
CREATE TRIGGER triage_header_stats_delete AFTER DELETE ON triage_letters
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_header_stats_on_delete();
CREATE TRIGGER triage_header_stats_truncate AFTER TRUNCATE ON triage_letters
  FOR EACH STATEMENT EXECUTE FUNCTION triage_header_stats_on_truncate();
