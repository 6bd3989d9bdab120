import "server-only";
import { SYSTEM_ACTOR } from "@/lib/audit";
import { formatUtc } from "@/lib/format";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { maskedText } from "@/lib/issues/view";
import { maskingPolicy, type MaskingPolicy } from "@/lib/masking/policy";
import type { OwnerOf } from "@/lib/operations/owners";
import { maskGroup } from "@/lib/triage/use-cases";
import {
  advanceIssueEventCursor,
  claimedEvents,
  claimIssueEvent,
  clearGroupStates,
  fireGroupState,
  issueEventCursor,
  passIssueEvent,
  type GroupRef,
} from "./group-store";
import { ruleApplies } from "./match";
import { buildAlertMessage, groupLink, type AlertGroup } from "./message";
import { describeCondition, type GroupCondition } from "./rules";

/**
 * Rules on failure groups ("failures as issues"), run by evaluateAlerts after each sampler round.
 *
 * New and regressed come from the console's own changes in failure_issue_events (written by
 * lib/triage/issue-sync.ts, one row per group and change): each round reads the rows after a
 * cursor, and each rule sends a row once (a claim keyed by rule and row, ./group-store.ts). Ids
 * are handed out before commit, so a row may become visible after a higher one: the cursor only
 * passes rows older than SETTLE_MS (a sync's transaction lasts at most a minute), and rows above
 * it are read again until then, their claims keeping the message single. A round costs the rows
 * written since the cursor, not the number of groups.
 *
 * Growth counts the group's letters in the triage index by arrival (dead-lettered time, else first
 * seen): the measure of the issues page's "growth", and the one that says when letters entered
 * rather than when a scan happened to read them. Per DLQ the index on (DLQ, arrival) gives the
 * letters of the window only, so a round costs the letters that arrived in the longest window
 * (at most a day), not the groups; a group fires when it reaches the count and again only after
 * a round found it below (one message per crossing).
 *
 * A group an operator ignores never alerts: a change read while its group is ignored is passed
 * over for good (claimed without a message); a growing group is not counted while ignored. The texts are
 * masked as a viewer of the DLQ sees them, since anyone in the receiving channel may read them.
 */
export const SETTLE_MS = 10 * 60_000;
const BATCH = 500;
const SHOWN_STATES = ["new", "regressed"] as const;

export interface GroupRule {
  rule: {
    id: string;
    name: string;
    createdAt: Date;
    connectionId: string | null;
    queuePattern: string | null;
    ownerTeam: string | null;
  };
  condition: GroupCondition;
}

export interface GroupEvaluation {
  /** Rule × group changes (or crossings) judged. */
  checked: number;
  /** Messages this evaluator queued (a racing one that lost queued none). */
  fired: number;
}

interface IssueText {
  label: string | null;
  exception_class: string | null;
  normalized_message: string | null;
}

/** The group's texts as a viewer of its DLQ reads them (lib/triage maskGroup, the issues' own masking). */
function viewerTexts(t: IssueText, policy: MaskingPolicy, groupKey: string): AlertGroup {
  const masked = maskGroup({ label: t.label ?? groupKey, normalizedMessage: t.normalized_message }, policy);
  return {
    title: masked.label,
    exceptionClass: maskedText(t.exception_class, policy),
    message: masked.normalizedMessage,
  };
}

function viewerPolicies(): (connectionId: string, queue: string) => Promise<MaskingPolicy> {
  const memo = new Map<string, Promise<MaskingPolicy>>();
  return (connectionId, queue) => {
    const key = JSON.stringify([connectionId, queue]);
    let p = memo.get(key);
    if (!p) {
      p = maskingPolicy("viewer", connectionId, queue);
      memo.set(key, p);
    }
    return p;
  };
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

export async function evaluateGroupAlerts(
  db: PrismaClient,
  rules: GroupRule[],
  opts: { now: Date; owners: OwnerOf },
): Promise<GroupEvaluation> {
  const result: GroupEvaluation = { checked: 0, fired: 0 };
  if (rules.length === 0) return result;
  const policyOf = viewerPolicies();
  await evaluateChanges(db, rules, opts, policyOf, result);
  await evaluateGrowth(db, rules, opts, policyOf, result);
  return result;
}

interface EventRow extends IssueText {
  id: string;
  connection_id: string;
  queue: string;
  group_key: string;
  to_state: string;
  text: string | null;
  at: Date;
  state: string | null;
  letters: number | null;
  first_seen_at: Date | null;
  last_seen_at: Date | null;
}

async function evaluateChanges(
  db: PrismaClient,
  all: GroupRule[],
  { now, owners }: { now: Date; owners: OwnerOf },
  policyOf: ReturnType<typeof viewerPolicies>,
  result: GroupEvaluation,
) {
  const rules = all.filter((r) => r.condition.kind === "group_new" || r.condition.kind === "group_regressed");
  const cursor = await issueEventCursor(db);
  // Rows old enough that no commit can still add one below them: the cursor may pass them.
  const [settled] = await db.$queryRawUnsafe<Array<{ hi: string | null }>>(
    `SELECT max(id)::text AS hi FROM failure_issue_events WHERE id > $1::bigint AND at <= $2::timestamptz`,
    cursor,
    new Date(now.getTime() - SETTLE_MS).toISOString(),
  );
  if (rules.length > 0) {
    const since = new Date(Math.min(...rules.map((r) => r.rule.createdAt.getTime())));
    let after = cursor;
    for (;;) {
      const events = await db.$queryRawUnsafe<EventRow[]>(
        `SELECT e.id::text AS id, e.connection_id, e.queue, e.group_key, e.to_state, e.text, e.at,
                f.state, f.label, f.exception_class, f.normalized_message, f.letters, f.first_seen_at, f.last_seen_at
           FROM failure_issue_events e
           LEFT JOIN failure_issues f ON f.connection_id = e.connection_id AND f.queue = e.queue AND f.group_key = e.group_key
          WHERE e.id > $1::bigint AND e.kind = 'state' AND e.actor_email = $2 AND e.to_state = ANY($3::text[])
            AND e.at >= $4::timestamptz
          ORDER BY e.id LIMIT ${BATCH}`,
        after,
        SYSTEM_ACTOR.email,
        [...SHOWN_STATES],
        since.toISOString(),
      );
      if (events.length === 0) break;
      after = events[events.length - 1].id;
      const sent = await claimedEvents(
        db,
        rules.map((r) => r.rule.id),
        events.map((e) => e.id),
      );
      for (const e of events) {
        const owner = owners(e.connection_id, e.queue);
        for (const { rule, condition } of rules) {
          if (condition.kind !== `group_${e.to_state}`) continue;
          if (new Date(e.at) < rule.createdAt || sent.has(`${rule.id}\u0000${e.id}`)) continue;
          if (!ruleApplies(rule, { connectionId: e.connection_id, queue: e.queue }, owner)) continue;
          result.checked++;
          // Ignored by the time it is read (or the issue gone with its DLQ's index): passed over for good.
          if (e.state === null || e.state === "ignored") {
            await passIssueEvent(db, rule.id, e.id);
            continue;
          }
          const letters = Number(e.letters ?? 0);
          const span = `${plural(letters, "letter")}, dead-lettered from ${formatUtc(e.first_seen_at)} to ${formatUtc(e.last_seen_at)}`;
          const payload = buildAlertMessage({
            event: "fire",
            rule: { name: rule.name, condition: describeCondition(condition) },
            dlq: { connectionId: e.connection_id, queue: e.queue },
            owner,
            group: viewerTexts(e, await policyOf(e.connection_id, e.queue), e.group_key),
            value: e.to_state === "new" ? `first seen: ${span}` : `${e.text ?? "regressed"}; ${span}`,
            link: groupLink(e.connection_id, e.queue, e.group_key),
            at: now,
          });
          try {
            if (await claimIssueEvent(db, rule.id, e.id, { connectionId: e.connection_id, queue: e.queue }, payload))
              result.fired++;
          } catch (err) {
            // A rule deleted while this round ran (its claims cascade away): nothing to send.
            console.error(`[alerts] could not record the alert of rule ${rule.id}: ${(err as Error).message}`);
          }
        }
      }
      if (events.length < BATCH) break;
    }
  }
  if (settled?.hi) await advanceIssueEventCursor(db, settled.hi, now);
}

interface GrowthRow extends IssueText {
  connection_id: string;
  queue: string;
  group_key: string;
  n: number;
  state: string | null;
}

async function evaluateGrowth(
  db: PrismaClient,
  all: GroupRule[],
  { now, owners }: { now: Date; owners: OwnerOf },
  policyOf: ReturnType<typeof viewerPolicies>,
  result: GroupEvaluation,
) {
  const rules = all.flatMap((r) => (r.condition.kind === "group_grew" ? [{ ...r, params: r.condition.params }] : []));
  if (rules.length === 0) return;
  const windows = new Map<number, GrowthRow[]>();
  for (const minutes of new Set(rules.map((r) => r.params.minutes))) {
    const least = Math.min(...rules.filter((r) => r.params.minutes === minutes).map((r) => r.params.letters));
    // Per indexed DLQ (one cursor row each), the letters that arrived in the window, by group.
    windows.set(
      minutes,
      await db.$queryRawUnsafe<GrowthRow[]>(
        `SELECT d.connection_id, d.queue, g.group_key, g.n, f.state, f.label, f.exception_class, f.normalized_message
           FROM failure_issue_cursors d
           CROSS JOIN LATERAL (
             SELECT l.group_key, count(*)::int AS n FROM triage_letters l
              WHERE l.connection_id = d.connection_id AND l.queue = d.queue
                AND l.arrived_at > $1::timestamptz AND l.arrived_at <= $2::timestamptz
              GROUP BY l.group_key HAVING count(*) >= $3) g
           LEFT JOIN failure_issues f ON f.connection_id = d.connection_id AND f.queue = d.queue AND f.group_key = g.group_key`,
        new Date(now.getTime() - minutes * 60_000).toISOString(),
        now.toISOString(),
        least,
      ),
    );
  }
  const firing = new Set(
    (
      await db.alertGroupState.findMany({
        where: { ruleId: { in: rules.map((r) => r.rule.id) }, state: "firing" },
        select: { ruleId: true, connectionId: true, queue: true, groupKey: true },
      })
    ).map((s) => JSON.stringify([s.ruleId, s.connectionId, s.queue, s.groupKey])),
  );
  for (const { rule, condition, params } of rules) {
    const over: GroupRef[] = [];
    for (const g of windows.get(params.minutes) ?? []) {
      if (Number(g.n) < params.letters || g.state === "ignored") continue;
      const owner = owners(g.connection_id, g.queue);
      if (!ruleApplies(rule, { connectionId: g.connection_id, queue: g.queue }, owner)) continue;
      const ref = { connectionId: g.connection_id, queue: g.queue, groupKey: g.group_key };
      over.push(ref);
      result.checked++;
      if (firing.has(JSON.stringify([rule.id, ref.connectionId, ref.queue, ref.groupKey]))) continue;
      const value = `${plural(Number(g.n), "letter")} arrived in the last ${params.minutes === 1 ? "minute" : `${params.minutes} minutes`}`;
      const payload = buildAlertMessage({
        event: "fire",
        rule: { name: rule.name, condition: describeCondition(condition) },
        dlq: { connectionId: g.connection_id, queue: g.queue },
        owner,
        group: viewerTexts(g, await policyOf(g.connection_id, g.queue), g.group_key),
        value,
        link: groupLink(g.connection_id, g.queue, g.group_key),
        at: now,
      });
      try {
        if (await fireGroupState(db, rule.id, ref, now, value, payload)) result.fired++;
      } catch (err) {
        console.error(`[alerts] could not record the alert of rule ${rule.id}: ${(err as Error).message}`);
      }
    }
    await clearGroupStates(db, rule.id, over, now);
  }
}
