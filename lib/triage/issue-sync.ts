import "server-only";
import { recordAuditBatchIn, SYSTEM_ACTOR, type AuditEntry } from "@/lib/audit";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import {
  isIssueState,
  lifeOfRow,
  systemTransition,
  type IssueLifeColumns,
  type IssueState,
  type SystemChange,
} from "./issue-lifecycle";

/**
 * Keeps the failure issues of one DLQ in step with its groups (lib/triage/issue-lifecycle.ts):
 * run right after refreshGroupSummary. A group seen for the first time becomes a new issue; a
 * resolved group with a letter after its resolve regresses; an ignore whose time passed or whose
 * letters arrived ends. Letter counts grow by the letters indexed since the last sync, each once.
 */

/**
 * One change the console made on its own, for an alert evaluator: one per group and change. The
 * sync holds the DLQ's cursor row for its whole transaction, so two replicas syncing the same DLQ
 * at once produce each change once; `eventId` (the history row) names it for good, so a
 * deliverer may also tail failure_issue_events by id instead of taking these from the caller.
 */
export interface IssueTransition {
  eventId: string;
  connectionId: string;
  queue: string;
  groupKey: string;
  /** null: the group was seen for the first time. */
  from: IssueState | null;
  to: IssueState;
  reason: string;
  /** ISO 8601: when the sync made the change. */
  at: string;
  letters: number;
  firstSeenAt: string;
  lastSeenAt: string;
}

export const ISSUE_AUTO_ACTION = "issue.state_auto";

type Tx = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

interface IssueRow extends IssueLifeColumns {
  group_key: string;
  label: string;
  first_seen_at: Date;
}

interface Planned {
  groupKey: string;
  /** The group's label and parts where it is present now, else as kept. */
  title: GroupTitle | null;
  before: IssueRow | null;
  letters: number;
  firstSeenAt: Date;
  lastSeenAt: Date;
  change: SystemChange | null;
}

interface GroupTitle {
  label: string;
  exceptionClass: string | null;
  normalizedMessage: string | null;
}

interface GroupNow extends GroupTitle {
  firstAt: Date;
  lastAt: Date;
}

const maxDate = (a: Date, b: Date | null) => (b && b > a ? b : a);
const minDate = (a: Date, b: Date | null) => (b && b < a ? b : a);

/** Plans every issue of the DLQ from what the index holds now (pure over the rows read). */
function plan(
  issues: IssueRow[],
  groups: Map<string, GroupNow>,
  fresh: Map<string, number>,
  totals: Map<string, number>,
  now: Date,
): Planned[] {
  const out: Planned[] = [];
  const known = new Set<string>();
  for (const r of issues) {
    known.add(r.group_key);
    const g = groups.get(r.group_key) ?? null;
    const letters = Number(r.letters) + (fresh.get(r.group_key) ?? 0);
    out.push({
      groupKey: r.group_key,
      title: g,
      before: r,
      letters,
      firstSeenAt: minDate(new Date(r.first_seen_at), g?.firstAt ?? null),
      lastSeenAt: maxDate(new Date(r.last_seen_at), g?.lastAt ?? null),
      change: systemTransition(lifeOfRow(r), { lastAt: g?.lastAt ?? null, letters }, now),
    });
  }
  for (const [groupKey, g] of groups) {
    if (known.has(groupKey)) continue;
    const letters = totals.get(groupKey) ?? 0;
    out.push({
      groupKey,
      title: g,
      before: null,
      letters,
      firstSeenAt: g.firstAt,
      lastSeenAt: g.lastAt,
      change: systemTransition(null, { lastAt: g.lastAt, letters }, now),
    });
  }
  return out;
}

function changed(p: Planned): boolean {
  const b = p.before;
  if (!b) return true;
  return (
    p.change !== null ||
    (p.title !== null && p.title.label !== b.label) ||
    p.letters !== Number(b.letters) ||
    p.firstSeenAt.getTime() !== new Date(b.first_seen_at).getTime() ||
    p.lastSeenAt.getTime() !== new Date(b.last_seen_at).getTime()
  );
}

/**
 * Syncs the DLQ's issues in one transaction and returns the state changes it made (new, regressed,
 * an ignore that ended). `now` decides whether an ignore until a time has ended.
 */
export async function syncFailureIssues(
  db: PrismaClient,
  connectionId: string,
  queue: string,
  now: Date = new Date(),
): Promise<IssueTransition[]> {
  return db.$transaction((tx) => syncIn(tx, connectionId, queue, now), { timeout: 60_000, maxWait: 15_000 });
}

async function syncIn(tx: Tx, connectionId: string, queue: string, now: Date): Promise<IssueTransition[]> {
  await tx.$executeRawUnsafe(
    `INSERT INTO failure_issue_cursors (connection_id, queue, last_letter_id, synced_at)
     VALUES ($1, $2, 0, $3::timestamptz) ON CONFLICT DO NOTHING`,
    connectionId,
    queue,
    now.toISOString(),
  );
  // The DLQ's lock: a second sync waits here, then sees this one's issues and counts.
  await tx.$queryRawUnsafe(
    `SELECT last_letter_id::text AS last FROM failure_issue_cursors WHERE connection_id = $1 AND queue = $2 FOR UPDATE`,
    connectionId,
    queue,
  );
  // Letters indexed since the last sync, per group: triggers count every letter inserted
  // (triage_group_stats kind 'i', n) and this sync records how many it counted (n_handled), so no
  // pass over the new letters (a first scan's sync counted every letter of the DLQ). A letter seen
  // again keeps its row and is not counted again.
  const freshRows = await tx.$queryRawUnsafe<Array<{ group_key: string; n: number; total: number }>>(
    `SELECT group_key, (n - n_handled)::int AS n, n AS total FROM triage_group_stats
     WHERE connection_id = $1 AND queue = $2 AND kind = 'i' AND n <> n_handled`,
    connectionId,
    queue,
  );
  const groupRows = await tx.$queryRawUnsafe<
    Array<{
      group_key: string;
      first_at: Date;
      last_at: Date;
      label: string;
      exception_class: string | null;
      normalized_message: string | null;
    }>
  >(
    `SELECT group_key, first_at, last_at, label, exception_class, normalized_message FROM triage_groups WHERE connection_id = $1 AND queue = $2`,
    connectionId,
    queue,
  );
  const issues = await tx.$queryRawUnsafe<IssueRow[]>(
    `SELECT group_key, label, state, state_changed_at, resolved_at, resolve_note, ignore_mode, ignore_until,
       ignore_until_count, ignore_letters, letters, first_seen_at, last_seen_at
     FROM failure_issues WHERE connection_id = $1 AND queue = $2 ORDER BY group_key FOR UPDATE`,
    connectionId,
    queue,
  );
  const groups = new Map(
    groupRows.map((g): [string, GroupNow] => [
      g.group_key,
      {
        firstAt: new Date(g.first_at),
        lastAt: new Date(g.last_at),
        label: g.label,
        exceptionClass: g.exception_class,
        normalizedMessage: g.normalized_message,
      },
    ]),
  );
  const fresh = new Map(freshRows.map((r) => [r.group_key, Number(r.n)]));
  const known = new Set(issues.map((i) => i.group_key));
  const unseen = [...groups.keys()].filter((k) => !known.has(k));
  const totals = new Map<string, number>();
  if (unseen.length > 0) {
    const rows = await tx.$queryRawUnsafe<Array<{ group_key: string; n: number }>>(
      `SELECT group_key, n FROM triage_group_stats
       WHERE connection_id = $1 AND queue = $2 AND kind = 'i' AND group_key = ANY($3::text[])`,
      connectionId,
      queue,
      unseen,
    );
    for (const r of rows) totals.set(r.group_key, Number(r.n));
  }

  const planned = plan(issues, groups, fresh, totals, now).filter(changed);
  const nowIso = now.toISOString();
  const rowsJson = JSON.stringify(
    planned.map((p) => ({
      group_key: p.groupKey,
      is_new: p.before === null,
      label: p.title?.label ?? null,
      exception_class: p.title?.exceptionClass ?? null,
      normalized_message: p.title?.normalizedMessage ?? null,
      state: p.change?.to ?? p.before?.state,
      state_changed: p.change !== null,
      letters: p.letters,
      first_seen_at: p.firstSeenAt.toISOString(),
      last_seen_at: p.lastSeenAt.toISOString(),
    })),
  );
  if (planned.some((p) => p.before === null)) {
    await tx.$executeRawUnsafe(
      `INSERT INTO failure_issues (connection_id, queue, group_key, label, exception_class, normalized_message,
         state, state_changed_at, state_changed_by, letters, first_seen_at, last_seen_at, created_at, updated_at)
       SELECT $1, $2, r.group_key, r.label, r.exception_class, r.normalized_message, r.state, $3::timestamptz,
         'system', r.letters, r.first_seen_at, r.last_seen_at, $3::timestamptz, $3::timestamptz
       FROM json_to_recordset($4::json) AS r(group_key text, is_new boolean, label text, exception_class text,
         normalized_message text, state text, letters int, first_seen_at timestamptz, last_seen_at timestamptz)
       WHERE r.is_new
       ON CONFLICT DO NOTHING`,
      connectionId,
      queue,
      nowIso,
      rowsJson,
    );
  }
  if (planned.some((p) => p.before !== null)) {
    // An ended ignore leaves its rule behind; a regressed group keeps its resolve time for the history.
    await tx.$executeRawUnsafe(
      `UPDATE failure_issues f SET letters = r.letters, label = COALESCE(r.label, f.label),
         exception_class = CASE WHEN r.label IS NULL THEN f.exception_class ELSE r.exception_class END,
         normalized_message = CASE WHEN r.label IS NULL THEN f.normalized_message ELSE r.normalized_message END, first_seen_at = r.first_seen_at, last_seen_at = r.last_seen_at,
         state = r.state, updated_at = $3::timestamptz,
         state_changed_at = CASE WHEN r.state_changed THEN $3::timestamptz ELSE f.state_changed_at END,
         state_changed_by = CASE WHEN r.state_changed THEN 'system' ELSE f.state_changed_by END,
         ignore_mode = CASE WHEN r.state_changed THEN NULL ELSE f.ignore_mode END,
         ignore_until = CASE WHEN r.state_changed THEN NULL ELSE f.ignore_until END,
         ignore_until_count = CASE WHEN r.state_changed THEN NULL ELSE f.ignore_until_count END,
         ignore_letters = CASE WHEN r.state_changed THEN NULL ELSE f.ignore_letters END
       FROM json_to_recordset($4::json) AS r(group_key text, is_new boolean, label text, exception_class text,
         normalized_message text, state text, state_changed boolean, letters int, first_seen_at timestamptz, last_seen_at timestamptz)
       WHERE NOT r.is_new AND f.connection_id = $1 AND f.queue = $2 AND f.group_key = r.group_key`,
      connectionId,
      queue,
      nowIso,
      rowsJson,
    );
  }

  const changes = planned.filter((p) => p.change !== null);
  let transitions: IssueTransition[] = [];
  if (changes.length > 0) {
    const events = await tx.$queryRawUnsafe<Array<{ id: string; group_key: string }>>(
      `INSERT INTO failure_issue_events (connection_id, queue, group_key, kind, from_state, to_state, text,
         actor_id, actor_email, actor_role, at)
       SELECT $1, $2, r.group_key, 'state', r.from_state, r.to_state, r.reason, NULL, $3, NULL, $4::timestamptz
       FROM json_to_recordset($5::json) AS r(group_key text, from_state text, to_state text, reason text)
       RETURNING id::text AS id, group_key`,
      connectionId,
      queue,
      SYSTEM_ACTOR.email,
      nowIso,
      JSON.stringify(
        changes.map((p) => ({
          group_key: p.groupKey,
          from_state: p.before?.state ?? null,
          to_state: p.change!.to,
          reason: p.change!.reason,
        })),
      ),
    );
    const eventOf = new Map(events.map((e) => [e.group_key, e.id]));
    transitions = changes.map((p) => ({
      eventId: eventOf.get(p.groupKey)!,
      connectionId,
      queue,
      groupKey: p.groupKey,
      from: p.before ? (isIssueState(p.before.state) ? p.before.state : null) : null,
      to: p.change!.to,
      reason: p.change!.reason,
      at: nowIso,
      letters: p.letters,
      firstSeenAt: p.firstSeenAt.toISOString(),
      lastSeenAt: p.lastSeenAt.toISOString(),
    }));
    // Last: the audit chain's lock is held only from here to the commit.
    await recordAuditBatchIn(
      tx,
      transitions.map(
        (t): AuditEntry => ({
          actor: SYSTEM_ACTOR,
          action: ISSUE_AUTO_ACTION,
          outcome: "success",
          connectionId,
          queue,
          target: t.groupKey,
          details: { from: t.from, to: t.to, reason: t.reason, eventId: t.eventId, letters: t.letters },
        }),
      ),
    );
  }
  // What this sync counted (the counts read, not what writers added since).
  if (freshRows.length > 0) {
    await tx.$executeRawUnsafe(
      `UPDATE triage_group_stats s SET n_handled = s.n_handled + r.n
       FROM json_to_recordset($3::json) AS r(group_key text, n int)
       WHERE s.connection_id = $1 AND s.queue = $2 AND s.kind = 'i' AND s.value = '' AND s.group_key = r.group_key`,
      connectionId,
      queue,
      JSON.stringify(freshRows.map((r) => ({ group_key: r.group_key, n: Number(r.n) }))),
    );
  }
  // The highest letter id when synced: kept for reference (the counts above do the counting).
  await tx.$executeRawUnsafe(
    `UPDATE failure_issue_cursors SET last_letter_id = GREATEST(last_letter_id, COALESCE((SELECT max(id) FROM triage_letters), 0)),
       synced_at = $3::timestamptz
     WHERE connection_id = $1 AND queue = $2`,
    connectionId,
    queue,
    nowIso,
  );
  return transitions;
}
