-- The group-count triggers count the same rows as before (20261205163000_triage_group_stats_hours),
-- with the letters of a statement first aggregated by what they are counted by (group, minute, hour,
-- origin, version, reason, class): a batch of 500 letters of a few groups then expands into a few
-- dozen (kind, value) rows instead of 3,000, and the trigger's share of a scan's INSERT shrinks from
-- about 18 to a few µs per letter. Each value is computed by the same expression as before; the
-- 'i' rows (letters ever indexed) are unchanged. The update trigger keeps its planner settings
-- (20261205232500_triage_update_triggers_no_nested_loop).
-- Version headers: VERSION_HEADERS in lib/triage/index-row.ts (a unit test checks this list against it).

CREATE OR REPLACE FUNCTION triage_group_stats_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, t.n AS n,
             CASE WHEN d.kind IN ('m', 'h') THEN t.h ELSE 0 END AS h
      FROM (
        SELECT connection_id, queue, group_key,
               (floor(extract(epoch FROM arrived_at) / 60) * 60)::bigint::text AS minute_at,
               (floor(extract(epoch FROM arrived_at) / 3600) * 3600)::bigint::text AS hour_at,
               origin_queue, COALESCE(headers->>'x-app-version', headers->>'app-version', headers->>'x-producer-version', headers->>'x-consumer-version', headers->>'x-service-version', headers->>'__connect.errors.connector.name', headers->>'kafka_dlt-original-consumer-group') AS version, reason, exception_class,
               count(*)::int AS n, count(handled_outcome)::int AS h
        FROM new_rows WHERE gone_at IS NULL GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
      ) t CROSS JOIN LATERAL (VALUES
        ('m', t.minute_at), ('h', t.hour_at), ('o', t.origin_queue), ('v', t.version), ('r', t.reason), ('c', t.exception_class)
      ) AS d(kind, value)
      WHERE d.value IS NOT NULL
      UNION ALL
      -- Letters ever indexed (issue-sync.ts: n counted, n_handled synced into failure_issues.letters).
      SELECT connection_id, queue, group_key, 'i', '', count(*)::int, 0 FROM new_rows GROUP BY 1, 2, 3
    ) x
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 OR sum(h) <> 0
    -- One order for every writer: concurrent batches lock the rows they add to in the same order.
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (connection_id, queue, group_key, kind, value)
    DO UPDATE SET n = s.n + EXCLUDED.n, n_handled = s.n_handled + EXCLUDED.n_handled;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION triage_group_stats_on_update() RETURNS trigger LANGUAGE plpgsql
  SET enable_nestloop = off SET jit = off AS $$
BEGIN
  INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, t.n AS n,
             CASE WHEN d.kind IN ('m', 'h') THEN t.h ELSE 0 END AS h
      FROM (
        SELECT connection_id, queue, group_key,
               (floor(extract(epoch FROM arrived_at) / 60) * 60)::bigint::text AS minute_at,
               (floor(extract(epoch FROM arrived_at) / 3600) * 3600)::bigint::text AS hour_at,
               origin_queue, COALESCE(headers->>'x-app-version', headers->>'app-version', headers->>'x-producer-version', headers->>'x-consumer-version', headers->>'x-service-version', headers->>'__connect.errors.connector.name', headers->>'kafka_dlt-original-consumer-group') AS version, reason, exception_class,
               count(*)::int AS n, count(handled_outcome)::int AS h
        FROM new_rows WHERE gone_at IS NULL GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
      ) t CROSS JOIN LATERAL (VALUES
        ('m', t.minute_at), ('h', t.hour_at), ('o', t.origin_queue), ('v', t.version), ('r', t.reason), ('c', t.exception_class)
      ) AS d(kind, value)
      WHERE d.value IS NOT NULL
      UNION ALL
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, -t.n AS n,
             CASE WHEN d.kind IN ('m', 'h') THEN -t.h ELSE 0 END AS h
      FROM (
        SELECT connection_id, queue, group_key,
               (floor(extract(epoch FROM arrived_at) / 60) * 60)::bigint::text AS minute_at,
               (floor(extract(epoch FROM arrived_at) / 3600) * 3600)::bigint::text AS hour_at,
               origin_queue, COALESCE(headers->>'x-app-version', headers->>'app-version', headers->>'x-producer-version', headers->>'x-consumer-version', headers->>'x-service-version', headers->>'__connect.errors.connector.name', headers->>'kafka_dlt-original-consumer-group') AS version, reason, exception_class,
               count(*)::int AS n, count(handled_outcome)::int AS h
        FROM old_rows WHERE gone_at IS NULL GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
      ) t CROSS JOIN LATERAL (VALUES
        ('m', t.minute_at), ('h', t.hour_at), ('o', t.origin_queue), ('v', t.version), ('r', t.reason), ('c', t.exception_class)
      ) AS d(kind, value)
      WHERE d.value IS NOT NULL
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
