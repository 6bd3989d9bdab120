import "server-only";
import { getDb } from "@/lib/db";
import { asAppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { classOfLookupError, classOfNetworkError, classOfStatus, type Failure, failure } from "./failure";
import { postJson, SEND_TIMEOUT_MS, type SendResult } from "./send";
import { claimDue, recordAttempt, type AttemptOutcome } from "./store";
import { checkWebhookTarget, defaultPolicy, type CheckedTarget, type TargetPolicy } from "./target";

/** Waits after the 1st, 2nd, ... failed attempt; the attempt after the last is the final one. */
export const BACKOFF_MS = [30_000, 2 * 60_000, 10 * 60_000, 60 * 60_000, 60 * 60_000] as const;
/** Attempts before a delivery is given up (state `failed`): about 2 h 15 min after the first. */
export const MAX_ATTEMPTS = BACKOFF_MS.length + 1;
/** A claimed row is not claimed again for this long (a send takes at most SEND_TIMEOUT_MS plus the lookup). */
const CLAIM_LEASE_MS = 60_000;
const CONCURRENCY = 4;

export interface DeliveryRoundResult {
  attempted: number;
  delivered: number;
  /** Failed this time, to be tried again. */
  retrying: number;
  /** Given up (last attempt failed, or a failure no retry can fix). */
  failed: number;
}

/**
 * Sends what is due, as a maintenance task (every ~10 s). Any number of replicas may run it at
 * once: rows are claimed with FOR UPDATE SKIP LOCKED and leased (./store.ts). Each attempt's status
 * code or error is recorded on the row (the rule page's delivery log).
 */
export async function deliverAlerts(
  opts: { db?: PrismaClient; policy?: TargetPolicy; limit?: number; timeoutMs?: number } = {},
): Promise<DeliveryRoundResult> {
  const db = opts.db ?? getDb();
  const claimed = await claimDue(db, opts.limit ?? 50, CLAIM_LEASE_MS);
  const result: DeliveryRoundResult = { attempted: claimed.length, delivered: 0, retrying: 0, failed: 0 };
  if (claimed.length === 0) return result;
  const policy = opts.policy ?? defaultPolicy();
  const rules = new Map(
    (
      await db.alertRule.findMany({
        where: { id: { in: [...new Set(claimed.map((c) => c.ruleId))] } },
        select: { id: true, webhookUrl: true, enabled: true },
      })
    ).map((r) => [r.id, r]),
  );

  let next = 0;
  const worker = async () => {
    while (next < claimed.length) {
      const row = claimed[next++];
      const rule = rules.get(row.ruleId);
      let outcome: AttemptOutcome;
      if (!rule)
        outcome = {
          state: "failed",
          statusCode: null,
          failure: failure("rule deleted before sending", "The rule was deleted before the message went out."),
        };
      else if (!rule.enabled && row.event !== "test")
        outcome = {
          state: "failed",
          statusCode: null,
          failure: failure("rule disabled before sending", "The rule was disabled before the message went out."),
        };
      else outcome = retryPolicy(await attempt(rule.webhookUrl, row.payload, policy, opts.timeoutMs), row.attempts);
      if (!(await recordAttempt(db, row, outcome))) continue;
      result[outcome.state === "delivered" ? "delivered" : outcome.state === "failed" ? "failed" : "retrying"]++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, worker));
  return result;
}

/**
 * One attempt, as the log records it. `permanent`: retrying cannot help (a refused target, a 4xx
 * that is not a rate limit). Every role reads the failure's class; only admins its detail (./failure.ts).
 */
export type AttemptResult =
  | { ok: true; statusCode: number }
  | { ok: false; statusCode: number | null; failure: Failure; permanent: boolean };

/** Checks the target again (the allow-list or DNS may have changed since the rule was saved), then posts. */
export async function attempt(
  webhookUrl: string,
  payload: unknown,
  policy: TargetPolicy,
  timeoutMs = SEND_TIMEOUT_MS,
): Promise<AttemptResult> {
  let target: CheckedTarget;
  try {
    target = await checkWebhookTarget(webhookUrl, policy);
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    const permanent = err.code === "bad_request:webhook";
    return {
      ok: false,
      statusCode: null,
      failure: failure(
        permanent ? "refused by the webhook policy" : classOfLookupError(err.cause),
        `Not sent: ${err.userMessage}`,
      ),
      permanent,
    };
  }
  let res: SendResult;
  try {
    res = await postJson(target, JSON.stringify(payload), timeoutMs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      ok: false,
      statusCode: null,
      failure: failure(
        classOfNetworkError(e),
        `No answer from ${target.url.host}: ${code ? `${code}, ` : ""}${(e as Error).message}`.slice(0, 500),
      ),
      permanent: false,
    };
  }
  if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, statusCode: res.statusCode };
  const redirect = res.statusCode >= 300 && res.statusCode < 400;
  const retryable = res.statusCode >= 500 || res.statusCode === 408 || res.statusCode === 425 || res.statusCode === 429;
  const words = redirect
    ? "redirected (redirects are not followed; give the final URL)"
    : `answered HTTP ${res.statusCode}`;
  return {
    ok: false,
    statusCode: res.statusCode,
    failure: failure(
      classOfStatus(res.statusCode),
      `${target.url.host} ${words}${res.answer ? `: ${res.answer}` : ""}`,
    ),
    permanent: !retryable,
  };
}

/** What an attempt's result makes of the row after its `attempts`-th attempt. */
export function retryPolicy(r: AttemptResult, attempts: number): AttemptOutcome {
  if (r.ok) return { state: "delivered", statusCode: r.statusCode, failure: null };
  if (r.permanent || attempts >= MAX_ATTEMPTS) {
    const why = r.permanent ? "" : ` (gave up after ${attempts} attempts)`;
    return {
      state: "failed",
      statusCode: r.statusCode,
      failure: { ...r.failure, detail: `${r.failure.detail}${why}` },
    };
  }
  return {
    state: "pending",
    statusCode: r.statusCode,
    failure: r.failure,
    retryInMs: BACKOFF_MS[Math.min(attempts, BACKOFF_MS.length) - 1],
  };
}

/**
 * Keeps the delivery log and the resolved states bounded: messages delivered or given up, and
 * states resolved or cleared, more than `days` ago are deleted (pending messages and firing states
 * never), with the failure-group claims of that age the evaluator has read past.
 * An hourly maintenance task.
 */
export async function pruneAlerts(
  opts: { db?: PrismaClient; days?: number } = {},
): Promise<{ deliveries: number; states: number }> {
  const db = opts.db ?? getDb();
  const days = opts.days ?? 30;
  const deliveries = await db.$executeRawUnsafe(
    `DELETE FROM alert_deliveries WHERE state IN ('delivered', 'failed') AND created_at < now() - ($1::int * interval '1 day')`,
    days,
  );
  const states =
    (await db.$executeRawUnsafe(
      `DELETE FROM alert_states WHERE state = 'resolved' AND since < now() - ($1::int * interval '1 day')`,
      days,
    )) +
    (await db.$executeRawUnsafe(
      `DELETE FROM alert_group_states WHERE state = 'clear' AND since < now() - ($1::int * interval '1 day')`,
      days,
    ));
  // A claim is needed while the evaluator may read its change again: only those below its cursor go.
  await db.$executeRawUnsafe(
    `DELETE FROM alert_issue_claims WHERE created_at < now() - ($1::int * interval '1 day')
        AND event_id <= COALESCE((SELECT last_id FROM alert_cursors WHERE name = 'failure_issue_events'), 0)`,
    days,
  );
  return { deliveries, states };
}
