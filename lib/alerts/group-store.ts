import "server-only";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { SlackMessage } from "./message";

type Db = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

export interface GroupRef {
  connectionId: string;
  queue: string;
  groupKey: string;
}

/**
 * A rule sends one failure-issue change (a failure_issue_events row): the claim row and the
 * message are written in one statement. The claim's primary key (rule, event) makes it once: of
 * any number of evaluators racing (replicas, a restart, a round that reads the event again), one
 * inserts the claim and queues the message, the others insert nothing. Nothing happens for a rule
 * that is gone or disabled. Returns whether this call queued the message.
 */
export async function claimIssueEvent(
  db: Db,
  ruleId: string,
  eventId: string,
  dlq: { connectionId: string; queue: string },
  payload: SlackMessage,
): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<Array<{ id: bigint }>>(
    `WITH claimed AS (
       INSERT INTO alert_issue_claims (rule_id, event_id)
       SELECT $1::uuid, $2::bigint
        WHERE EXISTS (SELECT 1 FROM alert_rules r WHERE r.id = $1::uuid AND r.enabled)
       ON CONFLICT DO NOTHING
       RETURNING rule_id
     )
     INSERT INTO alert_deliveries (rule_id, connection_id, queue, event, payload)
     SELECT rule_id, $3, $4, 'fire', $5::jsonb FROM claimed
     RETURNING id`,
    ruleId,
    eventId,
    dlq.connectionId,
    dlq.queue,
    JSON.stringify(payload),
  );
  return rows.length > 0;
}

/**
 * A rule passes over a change for good (the group was ignored when the change was read): the claim
 * without a message, so a later round that reads the change again, after the ignore ended, does
 * not send news that is old by then.
 */
export async function passIssueEvent(db: Db, ruleId: string, eventId: string): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO alert_issue_claims (rule_id, event_id)
     SELECT $1::uuid, $2::bigint WHERE EXISTS (SELECT 1 FROM alert_rules r WHERE r.id = $1::uuid)
     ON CONFLICT DO NOTHING`,
    ruleId,
    eventId,
  );
}

/** Which of these events the rules have already sent or passed over (so a round reading them again builds no message). */
export async function claimedEvents(db: Db, ruleIds: string[], eventIds: string[]): Promise<Set<string>> {
  if (ruleIds.length === 0 || eventIds.length === 0) return new Set();
  const rows = await db.$queryRawUnsafe<Array<{ rule_id: string; event_id: string }>>(
    `SELECT rule_id::text AS rule_id, event_id::text AS event_id FROM alert_issue_claims
      WHERE rule_id = ANY($1::uuid[]) AND event_id = ANY($2::bigint[])`,
    ruleIds,
    eventIds,
  );
  return new Set(rows.map((r) => `${r.rule_id}\u0000${r.event_id}`));
}

/**
 * A group crosses a growth rule's count: the group's state becomes `firing` and the message is
 * queued, in one statement (ON CONFLICT locks the row; a racing evaluator finds it firing already).
 */
export async function fireGroupState(
  db: Db,
  ruleId: string,
  group: GroupRef,
  at: Date,
  value: string,
  payload: SlackMessage,
): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<Array<{ id: bigint }>>(
    `WITH changed AS (
       INSERT INTO alert_group_states (rule_id, connection_id, queue, group_key, state, since, value, updated_at)
       SELECT $1::uuid, $2, $3, $4, 'firing', $5::timestamptz, $6, $5::timestamptz
        WHERE EXISTS (SELECT 1 FROM alert_rules r WHERE r.id = $1::uuid AND r.enabled)
       ON CONFLICT (rule_id, connection_id, queue, group_key) DO UPDATE
         SET state = 'firing', since = EXCLUDED.since, value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
         WHERE alert_group_states.state <> 'firing'
       RETURNING rule_id, connection_id, queue
     )
     INSERT INTO alert_deliveries (rule_id, connection_id, queue, event, payload)
     SELECT rule_id, connection_id, queue, 'fire', $7::jsonb FROM changed
     RETURNING id`,
    ruleId,
    group.connectionId,
    group.queue,
    group.groupKey,
    at.toISOString(),
    value,
    JSON.stringify(payload),
  );
  return rows.length > 0;
}

/**
 * The groups of a growth rule firing now that are not in `over` (below the count, out of scope,
 * or gone) are cleared, without a message: the next crossing fires again. Returns how many.
 */
export async function clearGroupStates(db: Db, ruleId: string, over: GroupRef[], at: Date): Promise<number> {
  return db.$executeRawUnsafe(
    `UPDATE alert_group_states s SET state = 'clear', since = $2::timestamptz, updated_at = $2::timestamptz
      WHERE s.rule_id = $1::uuid AND s.state = 'firing'
        AND NOT EXISTS (
          SELECT 1 FROM json_to_recordset($3::json) AS o(connection_id text, queue text, group_key text)
           WHERE o.connection_id = s.connection_id AND o.queue = s.queue AND o.group_key = s.group_key)`,
    ruleId,
    at.toISOString(),
    JSON.stringify(over.map((g) => ({ connection_id: g.connectionId, queue: g.queue, group_key: g.groupKey }))),
  );
}

const CURSOR = "failure_issue_events";

/** How far failure_issue_events is settled for the evaluator (0 before the first round). */
export async function issueEventCursor(db: Db): Promise<string> {
  const rows = await db.$queryRawUnsafe<Array<{ last: string }>>(
    `SELECT last_id::text AS last FROM alert_cursors WHERE name = $1`,
    CURSOR,
  );
  return rows[0]?.last ?? "0";
}

/** Moves the cursor forward to `lastId` (never back: a slower evaluator's older value loses). */
export async function advanceIssueEventCursor(db: Db, lastId: string, at: Date): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO alert_cursors (name, last_id, updated_at) VALUES ($1, $2::bigint, $3::timestamptz)
     ON CONFLICT (name) DO UPDATE SET last_id = GREATEST(alert_cursors.last_id, EXCLUDED.last_id), updated_at = EXCLUDED.updated_at`,
    CURSOR,
    lastId,
    at.toISOString(),
  );
}
