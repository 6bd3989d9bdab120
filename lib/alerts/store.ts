import "server-only";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { Failure } from "./failure";
import type { AlertEvent, SlackMessage } from "./message";

type Db = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

export interface StateKey {
  ruleId: string;
  connectionId: string;
  queue: string;
}

/**
 * A rule starts firing for a DLQ: the state row becomes `firing` and the "fire" message is queued,
 * in one statement. Of any number of evaluators racing (replicas, a restart), exactly one sees the
 * row change (ON CONFLICT locks the row; the others find it firing already), so one message goes
 * out. Nothing happens for a rule that is gone or disabled. Returns whether this call made the change.
 */
export async function fireState(
  db: Db,
  key: StateKey,
  at: Date,
  value: string,
  payload: SlackMessage,
): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<Array<{ id: bigint }>>(
    `WITH changed AS (
       INSERT INTO alert_states (rule_id, connection_id, queue, state, since, value, updated_at)
       SELECT $1::uuid, $2, $3, 'firing', $4::timestamptz, $5, $4::timestamptz
        WHERE EXISTS (SELECT 1 FROM alert_rules r WHERE r.id = $1::uuid AND r.enabled)
       ON CONFLICT (rule_id, connection_id, queue) DO UPDATE
         SET state = 'firing', since = EXCLUDED.since, value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
         WHERE alert_states.state <> 'firing'
       RETURNING rule_id, connection_id, queue
     )
     INSERT INTO alert_deliveries (rule_id, connection_id, queue, event, payload)
     SELECT rule_id, connection_id, queue, 'fire', $6::jsonb FROM changed
     RETURNING id`,
    key.ruleId,
    key.connectionId,
    key.queue,
    at.toISOString(),
    value,
    JSON.stringify(payload),
  );
  return rows.length > 0;
}

/** A firing rule resolves for a DLQ: state `resolved` and the "resolve" message queued, once, in one statement (an UPDATE guarded by `state = 'firing'`). */
export async function resolveState(
  db: Db,
  key: StateKey,
  at: Date,
  value: string,
  payload: SlackMessage,
): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<Array<{ id: bigint }>>(
    `WITH changed AS (
       UPDATE alert_states SET state = 'resolved', since = $4::timestamptz, value = $5, updated_at = $4::timestamptz
        WHERE rule_id = $1::uuid AND connection_id = $2 AND queue = $3 AND state = 'firing'
       RETURNING rule_id, connection_id, queue
     )
     INSERT INTO alert_deliveries (rule_id, connection_id, queue, event, payload)
     SELECT rule_id, connection_id, queue, 'resolve', $6::jsonb FROM changed
     RETURNING id`,
    key.ruleId,
    key.connectionId,
    key.queue,
    at.toISOString(),
    value,
    JSON.stringify(payload),
  );
  return rows.length > 0;
}

export interface ClaimedDelivery {
  id: bigint;
  ruleId: string;
  connectionId: string;
  queue: string;
  event: AlertEvent;
  payload: SlackMessage;
  /** Counting this one. */
  attempts: number;
}

/**
 * Claims due deliveries (SKIP LOCKED: two replicas never claim one row) and leases them for
 * `leaseMs` by moving `next_attempt_at` ahead, so a process that dies mid-send leaves the row to
 * be retried after the lease, and no other round sends it meanwhile. A row waits while an older
 * message of the same rule and DLQ is still pending, so "resolved" never overtakes "firing".
 */
export async function claimDue(db: Db, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const rows = await db.$queryRawUnsafe<
    Array<{
      id: bigint;
      rule_id: string;
      connection_id: string;
      queue: string;
      event: string;
      payload: unknown;
      attempts: number;
    }>
  >(
    `UPDATE alert_deliveries d
        SET attempts = d.attempts + 1, next_attempt_at = now() + ($2::int * interval '1 millisecond')
      WHERE d.id IN (
        SELECT c.id FROM alert_deliveries c
         WHERE c.state = 'pending' AND c.next_attempt_at <= now()
           AND NOT EXISTS (
             SELECT 1 FROM alert_deliveries o
              WHERE o.state = 'pending' AND o.rule_id = c.rule_id AND o.connection_id = c.connection_id AND o.queue = c.queue AND o.id < c.id)
         ORDER BY c.next_attempt_at, c.id
         LIMIT $1
         FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.rule_id, d.connection_id, d.queue, d.event, d.payload, d.attempts`,
    limit,
    Math.round(leaseMs),
  );
  return rows
    .map((r) => ({
      id: BigInt(r.id),
      ruleId: r.rule_id,
      connectionId: r.connection_id,
      queue: r.queue,
      event: r.event as AlertEvent,
      payload: (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as SlackMessage,
      attempts: Number(r.attempts),
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

export interface AttemptOutcome {
  state: "pending" | "delivered" | "failed";
  statusCode: number | null;
  failure: Failure | null;
  /** For `pending`: when to try again. */
  retryInMs?: number;
}

/**
 * Records one attempt's outcome, only while the row is still the claim this round made. A success
 * keeps the last failure's words, so the log still says why it took more than one attempt.
 */
export async function recordAttempt(
  db: Db,
  claim: { id: bigint; attempts: number },
  o: AttemptOutcome,
): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE alert_deliveries SET
        state = $3,
        status_code = $4,
        last_error_class = CASE WHEN $3 = 'delivered' THEN last_error_class ELSE $7 END,
        last_error = CASE WHEN $3 = 'delivered' THEN last_error ELSE $5 END,
        next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + ($6::int * interval '1 millisecond') ELSE next_attempt_at END,
        delivered_at = CASE WHEN $3 = 'delivered' THEN now() ELSE delivered_at END
      WHERE id = $1::bigint AND attempts = $2 AND state = 'pending'`,
    claim.id.toString(),
    claim.attempts,
    o.state,
    o.statusCode,
    o.failure?.detail ?? null,
    Math.round(o.retryInMs ?? 0),
    o.failure?.errorClass ?? null,
  );
  return n > 0;
}
