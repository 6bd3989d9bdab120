-- Two more kinds of triage_group_stats rows, kept by the same statement triggers:
--   'h': the hour (epoch seconds) of arrived_at, n_handled counting handled_outcome, as 'm' per minute.
--        A group's counts and its arrivals in buckets of an hour or more read 168 rows a week, not 10,080.
--   'c': exception_class, so grouping a DLQ's present letters by class reads the counts, as by origin ('o')
--        and reason ('r') does.
-- Version headers: VERSION_HEADERS in lib/triage/index-row.ts (a unit test checks this list against it).

CREATE OR REPLACE FUNCTION triage_group_stats_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, 1 AS n,
             CASE WHEN d.kind IN ('m', 'h') AND t.handled_outcome IS NOT NULL THEN 1 ELSE 0 END AS h
      FROM new_rows t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('h', (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason),
        ('c', t.exception_class)) AS d(kind, value)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
      UNION ALL
      -- Letters ever indexed (issue-sync.ts: n counted, n_handled synced into failure_issues.letters).
      SELECT t.connection_id, t.queue, t.group_key, 'i', '', 1, 0 FROM new_rows t
    ) x
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 OR sum(h) <> 0
    -- One order for every writer: concurrent batches lock the rows they add to in the same order.
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (connection_id, queue, group_key, kind, value)
    DO UPDATE SET n = s.n + EXCLUDED.n, n_handled = s.n_handled + EXCLUDED.n_handled;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION triage_group_stats_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, 1 AS n,
             CASE WHEN d.kind IN ('m', 'h') AND t.handled_outcome IS NOT NULL THEN 1 ELSE 0 END AS h
      FROM new_rows t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('h', (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason),
        ('c', t.exception_class)) AS d(kind, value)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
      UNION ALL
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, -1 AS n,
             CASE WHEN d.kind IN ('m', 'h') AND t.handled_outcome IS NOT NULL THEN -1 ELSE 0 END AS h
      FROM old_rows t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('h', (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason),
        ('c', t.exception_class)) AS d(kind, value)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
      UNION ALL
      SELECT n.connection_id, n.queue, n.group_key, 'i', '', 1, 1 FROM new_rows n JOIN old_rows o USING (id) WHERE n.group_key <> o.group_key
      UNION ALL
      SELECT o.connection_id, o.queue, o.group_key, 'i', '', -1, -1 FROM new_rows n JOIN old_rows o USING (id) WHERE n.group_key <> o.group_key
    ) x
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 OR sum(h) <> 0
    -- One order for every writer: concurrent batches lock the rows they add to in the same order.
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (connection_id, queue, group_key, kind, value)
    DO UPDATE SET n = s.n + EXCLUDED.n, n_handled = s.n_handled + EXCLUDED.n_handled;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION triage_group_stats_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, -1 AS n,
             CASE WHEN d.kind IN ('m', 'h') AND t.handled_outcome IS NOT NULL THEN -1 ELSE 0 END AS h
      FROM old_rows t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('h', (floor(extract(epoch FROM t.arrived_at) / 3600) * 3600)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason),
        ('c', t.exception_class)) AS d(kind, value)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
      UNION ALL
      SELECT t.connection_id, t.queue, t.group_key, 'i', '', -1, -1 FROM old_rows t
    ) x
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 OR sum(h) <> 0
    -- One order for every writer: concurrent batches lock the rows they add to in the same order.
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (connection_id, queue, group_key, kind, value)
    DO UPDATE SET n = s.n + EXCLUDED.n, n_handled = s.n_handled + EXCLUDED.n_handled;
  RETURN NULL;
END $$;

-- The letters already indexed: hours from their minutes (every minute lies in one hour).
INSERT INTO triage_group_stats (connection_id, queue, group_key, kind, value, n, n_handled)
SELECT connection_id, queue, group_key, 'h', ((value::bigint / 3600) * 3600)::text, sum(n), sum(n_handled)
FROM triage_group_stats WHERE kind = 'm'
GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 OR sum(n_handled) <> 0
ORDER BY 1, 2, 3, 4, 5;

-- Classes of the present letters.
INSERT INTO triage_group_stats (connection_id, queue, group_key, kind, value, n, n_handled)
SELECT connection_id, queue, group_key, 'c', exception_class, count(*), 0
FROM triage_letters WHERE gone_at IS NULL AND exception_class IS NOT NULL
GROUP BY 1, 2, 3, 4, 5
ORDER BY 1, 2, 3, 4, 5;
