import "server-only";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { STATE_RANK, type IssueLifeColumns, type IssueState } from "@/lib/triage/issue-lifecycle";
import { UNASSIGNED } from "./inputs";

/**
 * Reads of failure issues across DLQs. Every filter is on the console's own columns (state,
 * assignee, connection, DLQ), never on a group's text, and the order is by state, growth and
 * time: nothing a role is shown or counted depends on a value masking hides from it.
 */

type Db = Pick<PrismaClient, "$queryRawUnsafe">;

export interface IssueRow extends IssueLifeColumns {
  connection_id: string;
  queue: string;
  group_key: string;
  label: string;
  exception_class: string | null;
  normalized_message: string | null;
  state_changed_by: string;
  assignee_kind: string | null;
  assignee: string | null;
  first_seen_at: Date;
  /** Letters of the group in the DLQ now (0 when they all left). */
  present: number;
  /** Letters of the group that arrived in the GROWTH_WINDOW before now. */
  growth: number;
}

export const GROWTH_WINDOW_HOURS = 24;

/** The filter in SQL terms: `dlqs` (from an owner filter) and `connectionIds` (from a broker kind) are resolved by the caller. */
export interface IssueWhere {
  states?: IssueState[];
  assignee?: string;
  connectionId?: string;
  queue?: string;
  connectionIds?: string[];
  dlqs?: Array<{ connectionId: string; queue: string }>;
}

function whereOf(w: IssueWhere, params: unknown[]): string {
  const parts: string[] = [];
  const add = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (w.states?.length) parts.push(`f.state = ANY(${add(w.states)}::text[])`);
  if (w.assignee === UNASSIGNED) parts.push("f.assignee IS NULL");
  else if (w.assignee) parts.push(`f.assignee = ${add(w.assignee)}`);
  if (w.connectionId) parts.push(`f.connection_id = ${add(w.connectionId)}`);
  if (w.queue) parts.push(`f.queue = ${add(w.queue)}`);
  if (w.connectionIds) parts.push(`f.connection_id = ANY(${add(w.connectionIds)}::text[])`);
  if (w.dlqs) {
    const c = add(w.dlqs.map((d) => d.connectionId));
    const q = add(w.dlqs.map((d) => d.queue));
    parts.push(`(f.connection_id, f.queue) IN (SELECT * FROM unnest(${c}::text[], ${q}::text[]))`);
  }
  return parts.length ? parts.join(" AND ") : "TRUE";
}

const RANK_SQL = `CASE f.state ${Object.entries(STATE_RANK)
  .map(([s, r]) => `WHEN '${s}' THEN ${r}`)
  .join(" ")} ELSE 3 END`;

const COLUMNS = `f.connection_id, f.queue, f.group_key, f.label, f.exception_class, f.normalized_message, f.state,
  f.state_changed_at, f.state_changed_by, f.resolved_at, f.resolve_note, f.ignore_mode, f.ignore_until,
  f.ignore_until_count, f.ignore_letters, f.assignee_kind, f.assignee, f.letters, f.first_seen_at, f.last_seen_at,
  COALESCE(g.count, 0)::int AS present,
  (SELECT count(*)::int FROM triage_letters l WHERE l.connection_id = f.connection_id AND l.queue = f.queue
     AND l.group_key = f.group_key AND l.arrived_at >= $1::timestamptz - interval '${GROWTH_WINDOW_HOURS} hours') AS growth`;

/**
 * New and regressed first, then acknowledged, then ignored and resolved; within each, the fastest
 * growing first, then the most recently seen. At most `limit` rows, with the filtered set's size.
 */
export async function queryIssues(
  w: IssueWhere,
  now: Date,
  limit: number,
  db: Db = getDb(),
): Promise<{ rows: IssueRow[]; total: number }> {
  const params: unknown[] = [now.toISOString()];
  const where = whereOf(w, params);
  params.push(limit);
  const rows = await db.$queryRawUnsafe<Array<IssueRow & { total: number }>>(
    `SELECT ${COLUMNS}, count(*) OVER ()::int AS total
     FROM failure_issues f LEFT JOIN triage_groups g
       ON g.connection_id = f.connection_id AND g.queue = f.queue AND g.group_key = f.group_key
     WHERE ${where}
     ORDER BY ${RANK_SQL}, growth DESC, f.last_seen_at DESC, f.connection_id, f.queue, f.group_key
     LIMIT $${params.length}`,
    ...params,
  );
  return { rows: rows.map(({ total: _t, ...r }) => r), total: Number(rows[0]?.total ?? 0) };
}

/** Issues per state in the filtered set (the state filter itself left out), for the state tabs. */
export async function countIssuesByState(w: IssueWhere, db: Db = getDb()): Promise<Record<IssueState, number>> {
  const params: unknown[] = [];
  const where = whereOf({ ...w, states: undefined }, params);
  const rows = await db.$queryRawUnsafe<Array<{ state: string; n: number }>>(
    `SELECT f.state, count(*)::int AS n FROM failure_issues f WHERE ${where} GROUP BY f.state`,
    ...params,
  );
  const out: Record<IssueState, number> = { new: 0, acknowledged: 0, resolved: 0, regressed: 0, ignored: 0 };
  for (const r of rows) if (r.state in out) out[r.state as IssueState] = Number(r.n);
  return out;
}

export async function queryIssue(
  ref: { connectionId: string; queue: string; groupKey: string },
  now: Date,
  db: Db = getDb(),
): Promise<IssueRow | null> {
  const rows = await db.$queryRawUnsafe<IssueRow[]>(
    `SELECT ${COLUMNS} FROM failure_issues f LEFT JOIN triage_groups g
       ON g.connection_id = f.connection_id AND g.queue = f.queue AND g.group_key = f.group_key
     WHERE f.connection_id = $2 AND f.queue = $3 AND f.group_key = $4`,
    now.toISOString(),
    ref.connectionId,
    ref.queue,
    ref.groupKey,
  );
  return rows[0] ?? null;
}

/** The DLQs that issues exist for (an owner filter matches their names against the owners' globs). */
export async function issueDlqs(db: Db = getDb()): Promise<Array<{ connectionId: string; queue: string }>> {
  const rows = await db.$queryRawUnsafe<Array<{ connection_id: string; queue: string }>>(
    `SELECT DISTINCT connection_id, queue FROM failure_issues`,
  );
  return rows.map((r) => ({ connectionId: r.connection_id, queue: r.queue }));
}

/**
 * DLQs whose issues are behind: groups never synced (indexed before issues existed), or an ignore
 * until a time that has passed. Listing syncs them first, so the list never shows a stale state.
 */
export async function dlqsBehind(
  now: Date,
  db: Db = getDb(),
  limit = 50,
): Promise<Array<{ connectionId: string; queue: string }>> {
  const rows = await db.$queryRawUnsafe<Array<{ connection_id: string; queue: string }>>(
    `SELECT connection_id, queue FROM (
       SELECT DISTINCT g.connection_id, g.queue FROM triage_groups g
       WHERE NOT EXISTS (SELECT 1 FROM failure_issue_cursors c WHERE c.connection_id = g.connection_id AND c.queue = g.queue)
       UNION
       SELECT DISTINCT connection_id, queue FROM failure_issues
       WHERE state = 'ignored' AND ignore_mode = 'until_time' AND ignore_until <= $1::timestamptz
     ) x ORDER BY 1, 2 LIMIT $2`,
    now.toISOString(),
    limit,
  );
  return rows.map((r) => ({ connectionId: r.connection_id, queue: r.queue }));
}

export interface IssueEventRow {
  id: string;
  kind: string;
  from_state: string | null;
  to_state: string | null;
  text: string | null;
  actor_email: string | null;
  actor_role: string | null;
  at: Date;
}

/** The issue's history, oldest first (at most the latest 500 entries). */
export async function queryIssueEvents(
  ref: { connectionId: string; queue: string; groupKey: string },
  db: Db = getDb(),
): Promise<IssueEventRow[]> {
  const rows = await db.$queryRawUnsafe<IssueEventRow[]>(
    `SELECT * FROM (
       SELECT id::text AS id, kind, from_state, to_state, text, actor_email, actor_role, at FROM failure_issue_events
       WHERE connection_id = $1 AND queue = $2 AND group_key = $3 ORDER BY id DESC LIMIT 500
     ) x ORDER BY id::bigint`,
    ref.connectionId,
    ref.queue,
    ref.groupKey,
  );
  return rows;
}

type Tx = Pick<PrismaClient, "$queryRawUnsafe">;

/** The issue rows of a filter, locked for a change (in key order, so two changes never deadlock). */
export async function lockIssues(tx: Tx, w: IssueWhere, limit: number): Promise<IssueRow[]> {
  const params: unknown[] = [];
  const where = whereOf(w, params);
  params.push(limit);
  return tx.$queryRawUnsafe<IssueRow[]>(
    `SELECT f.*, 0 AS present, 0 AS growth FROM failure_issues f WHERE ${where}
     ORDER BY f.connection_id, f.queue, f.group_key LIMIT $${params.length} FOR UPDATE`,
    ...params,
  );
}

/** One issue row, locked for a change; null when there is none. */
export async function lockIssue(
  tx: Tx,
  ref: { connectionId: string; queue: string; groupKey: string },
): Promise<IssueRow | null> {
  const rows = await tx.$queryRawUnsafe<IssueRow[]>(
    `SELECT f.*, 0 AS present, 0 AS growth FROM failure_issues f
     WHERE f.connection_id = $1 AND f.queue = $2 AND f.group_key = $3 FOR UPDATE`,
    ref.connectionId,
    ref.queue,
    ref.groupKey,
  );
  return rows[0] ?? null;
}

/** At most this many hours in a group's trend: 30 days of hourly bars. */
export const TREND_HOURS = 30 * 24;

/**
 * A group's letters per hour of their death time, over its life (the letters the index still
 * holds, gone ones included, for at most TREND_HOURS up to its latest), and its sample letters
 * still in the DLQ. Reads the (connection, queue, group key, arrival) index.
 */
export async function queryIssueActivity(
  ref: { connectionId: string; queue: string; groupKey: string },
  db: Db = getDb(),
): Promise<{ hourly: Array<{ hour: Date; letters: number }>; samples: string[] }> {
  const [hourly, samples] = await Promise.all([
    db.$queryRawUnsafe<Array<{ hour: Date; letters: number }>>(
      `WITH last AS (
         SELECT max(arrived_at) AS at FROM triage_letters
         WHERE connection_id = $1 AND queue = $2 AND group_key = $3
       )
       SELECT date_trunc('hour', t.arrived_at) AS hour, count(*)::int AS letters
       FROM triage_letters t, last
       WHERE t.connection_id = $1 AND t.queue = $2 AND t.group_key = $3
         AND t.arrived_at > last.at - make_interval(hours => $4)
       GROUP BY 1 ORDER BY 1`,
      ref.connectionId,
      ref.queue,
      ref.groupKey,
      TREND_HOURS,
    ),
    db.$queryRawUnsafe<Array<{ letter_id: string }>>(
      `SELECT letter_id FROM triage_letters
       WHERE connection_id = $1 AND queue = $2 AND group_key = $3 AND gone_at IS NULL
       ORDER BY arrived_at DESC, id DESC LIMIT 5`,
      ref.connectionId,
      ref.queue,
      ref.groupKey,
    ),
  ]);
  return { hourly, samples: samples.map((s) => s.letter_id) };
}
