import "server-only";
import { RESOLUTIONS } from "@/lib/operations/samples";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { ownerResolver, type OwnerOf } from "@/lib/operations/owners";
import { ruleApplies, judge, type DlqVitals, type OpenFinding, type Verdict } from "./match";
import { buildAlertMessage, dlqLink } from "./message";
import { evaluateGroupAlerts, type GroupRule } from "./group-evaluate";
import {
  describeCondition,
  isGroupKind,
  parseCondition,
  severityRank,
  type DlqCondition,
  type GroupCondition,
} from "./rules";
import { fireState, resolveState } from "./store";

export interface EvaluationResult {
  rules: number;
  /** Rule × DLQ pairs judged, plus rule × failure-group changes and crossings (./group-evaluate.ts). */
  checked: number;
  /** Transitions this evaluator made (a racing one that lost made none). */
  fired: number;
  resolved: number;
}

const keyOf = (connectionId: string, queue: string) => `${connectionId}\u0000${queue}`;

interface Candidate {
  connectionId: string;
  queue: string;
  vitals: DlqVitals | null;
}

/**
 * One evaluation of every enabled rule against the sampler's latest figures (dlq_status), open
 * findings and the 60 s samples: a message when a rule starts firing for a DLQ and one when it
 * resolves, none in between. Call after every sampling round. Reads are a handful of queries per
 * round; writes happen only on a change, each in one statement (./store.ts) that makes it exact
 * across restarts and replicas.
 *
 * Inflow rules read `inflow` of the finest buckets still kept over their window (dlq_samples: 60 s
 * buckets for windows up to 2 h, else 900 s ones) that overlap the last m minutes (so up to one
 * bucket more), not `inflowPerMin`, which is an hour's average. A DLQ the sampler marks missing, or that left a rule's scope, resolves.
 *
 * Rules on failure groups (new, regressed, grew) are judged last, per group (./group-evaluate.ts).
 */
export async function evaluateAlerts(
  opts: { db?: PrismaClient; now?: Date; owners?: OwnerOf } = {},
): Promise<EvaluationResult> {
  const db = opts.db ?? getDb();
  const now = opts.now ?? new Date();
  const rules = await db.alertRule.findMany({ where: { enabled: true }, orderBy: { createdAt: "asc" } });
  const result: EvaluationResult = { rules: rules.length, checked: 0, fired: 0, resolved: 0 };
  if (rules.length === 0) return result;

  const parsed: Array<{ rule: (typeof rules)[number]; condition: DlqCondition }> = [];
  const groupRules: GroupRule[] = [];
  for (const r of rules) {
    const p = parseCondition(r.kind, r.params);
    if (!p.ok) console.error(`[alerts] rule ${r.id} has unreadable params (${p.message}); skipped`);
    else if (isGroupKind(p.condition.kind)) groupRules.push({ rule: r, condition: p.condition as GroupCondition });
    else parsed.push({ rule: r, condition: p.condition as DlqCondition });
  }

  const statuses = await db.dlqStatus.findMany({
    select: {
      connectionId: true,
      queue: true,
      depth: true,
      oldestAt: true,
      oldestSource: true,
      oldestAsOf: true,
      deadlineAt: true,
      error: true,
      missingSince: true,
    },
  });
  const candidates = new Map<string, Candidate>(
    statuses.map((s) => [keyOf(s.connectionId, s.queue), { connectionId: s.connectionId, queue: s.queue, vitals: s }]),
  );

  const findings = new Map<string, OpenFinding>();
  const findingCandidates = new Map<string, Candidate>();
  if (parsed.some((p) => p.condition.kind === "finding_at_least")) {
    const open = await db.dlqFinding.findMany({
      where: { resolvedAt: null, queue: { not: null } },
      select: { connectionId: true, queue: true, severity: true, code: true, object: true },
    });
    for (const f of open) {
      const k = keyOf(f.connectionId, f.queue!);
      const worst = findings.get(k);
      if (!worst || severityRank(f.severity) > severityRank(worst.severity))
        findings.set(k, { severity: f.severity, code: f.code, object: f.object });
      if (!candidates.has(k)) findingCandidates.set(k, { connectionId: f.connectionId, queue: f.queue!, vitals: null });
    }
  }

  const inflowWindows = parsed.flatMap((p) =>
    p.condition.kind === "inflow_within" ? [p.condition.params.minutes] : [],
  );
  const buckets = new Map<number, InflowBucket[]>();
  for (const res of new Set(inflowWindows.map(inflowResolution))) {
    buckets.set(
      res,
      await inflowBuckets(db, now, Math.max(...inflowWindows.filter((m) => inflowResolution(m) === res)), res),
    );
  }

  const owners = opts.owners ?? (await ownerResolver());
  const states = await db.alertState.findMany({ where: { ruleId: { in: parsed.map((p) => p.rule.id) } } });
  const stateOf = new Map(states.map((s) => [`${s.ruleId}\u0000${keyOf(s.connectionId, s.queue)}`, s]));

  for (const { rule, condition } of parsed) {
    const inflowOf =
      condition.kind === "inflow_within"
        ? inflowSums(
            buckets.get(inflowResolution(condition.params.minutes)) ?? [],
            now,
            condition.params.minutes,
            inflowResolution(condition.params.minutes),
          )
        : null;
    const pool =
      condition.kind === "finding_at_least"
        ? [...candidates.values(), ...findingCandidates.values()]
        : [...candidates.values()];
    const seen = new Set<string>();
    for (const c of pool) {
      const owner = owners(c.connectionId, c.queue);
      if (!ruleApplies(rule, c, owner)) continue;
      const k = keyOf(c.connectionId, c.queue);
      seen.add(k);
      result.checked++;
      const verdict = judge(condition, {
        now,
        vitals: c.vitals,
        inflow: inflowOf?.get(k) ?? 0,
        finding: findings.get(k) ?? null,
      });
      const current = stateOf.get(`${rule.id}\u0000${k}`)?.state ?? null;
      await apply(db, { rule, condition, dlq: c, owner, verdict, current, now }, result);
    }
    // Firing for a DLQ that is no longer judged (left the scope, or its status row is gone): resolve.
    for (const s of states) {
      if (s.ruleId !== rule.id || s.state !== "firing" || seen.has(keyOf(s.connectionId, s.queue))) continue;
      const dlq = { connectionId: s.connectionId, queue: s.queue, vitals: null };
      const verdict: Verdict = {
        state: "clear",
        value: candidates.has(keyOf(s.connectionId, s.queue))
          ? "the DLQ no longer matches the rule's scope"
          : "the DLQ is no longer sampled",
      };
      await apply(
        db,
        { rule, condition, dlq, owner: owners(s.connectionId, s.queue), verdict, current: "firing", now },
        result,
      );
    }
  }
  const groups = await evaluateGroupAlerts(db, groupRules, { now, owners });
  result.checked += groups.checked;
  result.fired += groups.fired;
  return result;
}

async function apply(
  db: PrismaClient,
  t: {
    rule: { id: string; name: string };
    condition: DlqCondition;
    dlq: Candidate;
    owner: ReturnType<OwnerOf>;
    verdict: Verdict;
    current: string | null;
    now: Date;
  },
  result: EvaluationResult,
) {
  const { verdict } = t;
  if (verdict.state === "unknown") return;
  if (verdict.state === "firing" && t.current === "firing") return;
  if (verdict.state === "clear" && t.current !== "firing") return;
  const event = verdict.state === "firing" ? "fire" : "resolve";
  const payload = buildAlertMessage({
    event,
    rule: { name: t.rule.name, condition: describeCondition(t.condition) },
    dlq: { connectionId: t.dlq.connectionId, queue: t.dlq.queue },
    owner: t.owner,
    value: verdict.value,
    link: dlqLink(t.dlq.connectionId, t.dlq.queue),
    at: t.now,
  });
  const key = { ruleId: t.rule.id, connectionId: t.dlq.connectionId, queue: t.dlq.queue };
  try {
    if (event === "fire") {
      if (await fireState(db, key, t.now, verdict.value, payload)) result.fired++;
    } else if (await resolveState(db, key, t.now, verdict.value, payload)) {
      result.resolved++;
    }
  } catch (e) {
    // A rule deleted while this round ran (its states cascade away): nothing to send.
    console.error(`[alerts] could not record the ${event} of rule ${t.rule.id}: ${(e as Error).message}`);
  }
}

interface InflowBucket {
  key: string;
  bucketAt: number;
  inflow: number;
}

/** The finest sample resolution still kept over a window of `minutes` (lib/operations/samples.ts). */
function inflowResolution(minutes: number): number {
  const fit = RESOLUTIONS.find((r) => r.keepMs === null || r.keepMs >= minutes * 60_000 + r.seconds * 1000);
  return fit?.seconds ?? RESOLUTIONS[RESOLUTIONS.length - 1].seconds;
}

/** Buckets of `resolution` seconds with inflow that overlap the longest window of the inflow rules read at it. */
async function inflowBuckets(
  db: PrismaClient,
  now: Date,
  minutes: number,
  resolution: number,
): Promise<InflowBucket[]> {
  const since = new Date(now.getTime() - minutes * 60_000 - resolution * 1000);
  const rows = await db.dlqSample.findMany({
    where: { resolution, bucketAt: { gt: since }, inflow: { gt: 0 } },
    select: { connectionId: true, queue: true, bucketAt: true, inflow: true },
  });
  return rows.map((r) => ({
    key: keyOf(r.connectionId, r.queue),
    bucketAt: r.bucketAt.getTime(),
    inflow: r.inflow ?? 0,
  }));
}

/** Letters per DLQ in the buckets overlapping the last `minutes` (a bucket starting up to one width before the window counts). */
function inflowSums(buckets: InflowBucket[], now: Date, minutes: number, resolution: number): Map<string, number> {
  const from = now.getTime() - minutes * 60_000 - resolution * 1000;
  const sums = new Map<string, number>();
  for (const b of buckets)
    if (b.bucketAt > from && b.bucketAt <= now.getTime()) sums.set(b.key, (sums.get(b.key) ?? 0) + b.inflow);
  return sums;
}
