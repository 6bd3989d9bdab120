-- Hand-written: a header name is counted by the worker, no longer in the page request under a SHARE
-- lock on triage_letters (lib/triage/header-stats.ts fillHeader). New states of triage_counted_headers:
-- 'wanted' (asked for; the triggers ignore it) and 'filling' (the triggers keep its changes, as for
-- 'counted', while the worker adds the letters already there). Only 'counted' counts are read.
-- The three functions are restated with state IN ('counted', 'filling'); the UPDATE one keeps the
-- settings *_triage_header_update_trigger_no_nested_loop gave it (CREATE OR REPLACE resets them).

CREATE OR REPLACE FUNCTION triage_header_stats_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM triage_counted_headers WHERE state IN ('counted', 'filling')) THEN RETURN NULL; END IF;
  INSERT INTO triage_header_stats AS s (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
    SELECT connection_id, queue, name, kind, value, hour, sum(n),
      COALESCE(min(at) FILTER (WHERE n > 0), 'infinity'), COALESCE(max(at) FILTER (WHERE n > 0), '-infinity')
    FROM (
      SELECT t.connection_id, t.queue, c.name, d.kind, d.value, d.hour, 1 AS n, t.arrived_at AS at
      FROM new_rows t JOIN triage_counted_headers c ON c.connection_id = t.connection_id AND c.queue = t.queue AND c.state IN ('counted', 'filling')
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

CREATE OR REPLACE FUNCTION triage_header_stats_on_update() RETURNS trigger LANGUAGE plpgsql
  SET enable_nestloop = off SET jit = off AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM triage_counted_headers WHERE state IN ('counted', 'filling')) THEN RETURN NULL; END IF;
  INSERT INTO triage_header_stats AS s (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
    SELECT connection_id, queue, name, kind, value, hour, sum(n),
      COALESCE(min(at) FILTER (WHERE n > 0), 'infinity'), COALESCE(max(at) FILTER (WHERE n > 0), '-infinity')
    FROM (
      SELECT t.connection_id, t.queue, c.name, d.kind, d.value, d.hour, 1 AS n, t.arrived_at AS at
      FROM new_rows t JOIN triage_counted_headers c ON c.connection_id = t.connection_id AND c.queue = t.queue AND c.state IN ('counted', 'filling')
      CROSS JOIN LATERAL (SELECT t.headers->>c.name AS v, (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint AS hour) x
      CROSS JOIN LATERAL (VALUES ('v', x.v, x.hour), ('t', x.v, 0::bigint), ('n', CASE WHEN x.v IS NULL THEN '' END, x.hour)) d(kind, value, hour)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
      UNION ALL
      SELECT t.connection_id, t.queue, c.name, d.kind, d.value, d.hour, -1 AS n, t.arrived_at AS at
      FROM old_rows t JOIN triage_counted_headers c ON c.connection_id = t.connection_id AND c.queue = t.queue AND c.state IN ('counted', 'filling')
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

CREATE OR REPLACE FUNCTION triage_header_stats_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM triage_counted_headers WHERE state IN ('counted', 'filling')) THEN RETURN NULL; END IF;
  INSERT INTO triage_header_stats AS s (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
    SELECT connection_id, queue, name, kind, value, hour, sum(n),
      COALESCE(min(at) FILTER (WHERE n > 0), 'infinity'), COALESCE(max(at) FILTER (WHERE n > 0), '-infinity')
    FROM (
      SELECT t.connection_id, t.queue, c.name, d.kind, d.value, d.hour, -1 AS n, t.arrived_at AS at
      FROM old_rows t JOIN triage_counted_headers c ON c.connection_id = t.connection_id AND c.queue = t.queue AND c.state IN ('counted', 'filling')
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
