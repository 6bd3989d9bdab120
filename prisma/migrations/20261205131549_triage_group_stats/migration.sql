-- CreateTable
CREATE TABLE "triage_group_stats" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "group_key" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "n_handled" INTEGER NOT NULL,

    CONSTRAINT "triage_group_stats_pkey" PRIMARY KEY ("connection_id","queue","group_key","kind","value")
);

-- Kept by statement-level triggers with transition tables: each INSERT, UPDATE (including the
-- UPDATE of an INSERT ... ON CONFLICT) and DELETE on triage_letters adds its rows' deltas in one
-- aggregate per statement, so every writer (scans, the indexer, markGone, regroup, redrive,
-- retention) keeps the counts without a pass over the index. Version headers: VERSION_HEADERS in
-- lib/triage/index-row.ts (a unit test checks this list against it).
CREATE FUNCTION triage_group_stats_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, 1 AS n,
             CASE WHEN d.kind = 'm' AND t.handled_outcome IS NOT NULL THEN 1 ELSE 0 END AS h
      FROM new_rows t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason)) AS d(kind, value)
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

CREATE FUNCTION triage_group_stats_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, 1 AS n,
             CASE WHEN d.kind = 'm' AND t.handled_outcome IS NOT NULL THEN 1 ELSE 0 END AS h
      FROM new_rows t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason)) AS d(kind, value)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
      UNION ALL
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, -1 AS n,
             CASE WHEN d.kind = 'm' AND t.handled_outcome IS NOT NULL THEN -1 ELSE 0 END AS h
      FROM old_rows t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason)) AS d(kind, value)
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

CREATE FUNCTION triage_group_stats_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, -1 AS n,
             CASE WHEN d.kind = 'm' AND t.handled_outcome IS NOT NULL THEN -1 ELSE 0 END AS h
      FROM old_rows t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason)) AS d(kind, value)
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

CREATE FUNCTION triage_group_stats_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM triage_group_stats;
  RETURN NULL;
END $$;

CREATE TRIGGER triage_group_stats_insert AFTER INSERT ON triage_letters
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_group_stats_on_insert();
CREATE TRIGGER triage_group_stats_update AFTER UPDATE ON triage_letters
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_group_stats_on_update();
CREATE TRIGGER triage_group_stats_delete AFTER DELETE ON triage_letters
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_group_stats_on_delete();
CREATE TRIGGER triage_group_stats_truncate AFTER TRUNCATE ON triage_letters
  FOR EACH STATEMENT EXECUTE FUNCTION triage_group_stats_on_truncate();

-- The letters already indexed.
INSERT INTO triage_group_stats AS s (connection_id, queue, group_key, kind, value, n, n_handled)
    SELECT connection_id, queue, group_key, kind, value, sum(n), sum(h) FROM (
      SELECT t.connection_id, t.queue, t.group_key, d.kind, d.value, 1 AS n,
             CASE WHEN d.kind = 'm' AND t.handled_outcome IS NOT NULL THEN 1 ELSE 0 END AS h
      FROM triage_letters t CROSS JOIN LATERAL (VALUES
        ('m', (floor(extract(epoch FROM t.arrived_at) / 60) * 60)::bigint::text),
        ('o', t.origin_queue),
        ('v', COALESCE(t.headers->>'x-app-version', t.headers->>'app-version', t.headers->>'x-producer-version', t.headers->>'x-consumer-version', t.headers->>'x-service-version', t.headers->>'__connect.errors.connector.name', t.headers->>'kafka_dlt-original-consumer-group')),
        ('r', t.reason)) AS d(kind, value)
      WHERE t.gone_at IS NULL AND d.value IS NOT NULL
    ) x
    GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 OR sum(h) <> 0
    -- One order for every writer: concurrent batches lock the rows they add to in the same order.
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (connection_id, queue, group_key, kind, value)
    DO UPDATE SET n = s.n + EXCLUDED.n, n_handled = s.n_handled + EXCLUDED.n_handled;

-- Letters ever indexed, those the issue sync already counted (ids up to its cursor) as synced.
INSERT INTO triage_group_stats (connection_id, queue, group_key, kind, value, n, n_handled)
SELECT t.connection_id, t.queue, t.group_key, 'i', '', count(*), count(*) FILTER (WHERE t.id <= COALESCE(c.last_letter_id, 0))
FROM triage_letters t LEFT JOIN failure_issue_cursors c ON c.connection_id = t.connection_id AND c.queue = t.queue
GROUP BY 1, 2, 3, 4, 5;
