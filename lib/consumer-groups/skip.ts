import "server-only";
import { z } from "zod";
import { recordAudit, recordAuditIn } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import {
  CommittedOffsetMovedError,
  ConsumerGroupActiveError,
  type ConsumerGroupOps,
  type GroupMemberRef,
} from "@/lib/brokers/contract/consumer-groups";
import { consumerGroupsConfigOf, loadConfig } from "@/lib/config";
import { getDb } from "@/lib/db";
import { AppError, asAppError } from "@/lib/errors";
import { wakeJobWorker } from "@/lib/jobs/process-worker";
import { jobStore } from "@/lib/jobs/store";
import type { JobRecord } from "@/lib/jobs/types";
import { jobViewBase, type JobViewBase } from "@/lib/jobs/view";
import { audited, auditActor, errorCodeOf, jobActEntry, jobScope } from "@/lib/use-case/audited";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";
import { dltNameFor } from "./dlt";
import type { GroupSkipParams, GroupSkipProgress } from "./skip-handler";
import { parseInput } from "@/lib/use-case/input";

/**
 * "Move it to the DLT and skip it" , as use cases: authorize → validate (zod) →
 * act → audit. The skip itself is a `group-skip` job (./skip-handler.ts); operation id = job id.
 * Audit actions: group.skip_plan, group.skip (the start, or its refusal), group.skip_cancel,
 * group.skip_view / group.skip_list (refusals only), and the job's group.skipped (per record),
 * group.skip_copied (copies kept by a failed skip) and group.skip_finished.
 */

const offset = z
  .union([
    z.bigint(),
    z.number().int(),
    z
      .string()
      .trim()
      .regex(/^\d{1,19}$/, "an offset is a whole number"),
  ])
  .transform((v) => BigInt(v))
  .pipe(z.bigint().min(0n));
const name = z.string().trim().min(1).max(255);
const partitionRef = z.object({
  connectionId: z.string().min(1).max(100),
  groupId: name,
  topic: name,
  partition: z.coerce.number().int().min(0).max(1_000_000),
});
const planSchema = partitionRef.extend({ upToOffset: offset.optional() });
const startSchema = partitionRef.extend({
  expectedCommitted: offset.nullable(),
  upToOffset: offset,
  confirmedCount: z.coerce.number().int().min(1),
  reason: z
    .string()
    .trim()
    .min(3, "State why the records are skipped (at least 3 characters): the reason travels with each copy in the DLT.")
    .max(1000),
  waitForEmpty: z.boolean(),
});
const jobRef = z.object({ jobId: z.string().min(1).max(100) });
const listSchema = z.object({ connectionId: z.string().min(1).max(100), groupId: name.optional() });
/** The audit scope of an input not yet validated: what it names, as far as it can be read. */
function rawScope(input: unknown, action: string) {
  const raw = (input ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    action,
    connectionId: str(raw.connectionId),
    queue: str(raw.topic),
    target: str(raw.groupId) ?? str(raw.jobId),
  };
}

export interface SkipPlan {
  connectionId: string;
  groupId: string;
  topic: string;
  partition: number;
  /** The group's committed offset now (null: none; the group reads from the log start). */
  committed: string | null;
  /** The record the group's consumer gets next: the first at or after the committed offset. */
  firstOffset: string;
  /** Last offset skipped, inclusive (default: the first record). */
  upToOffset: string;
  /** Offsets from `firstOffset` to `upToOffset` inclusive: what the admin confirms. */
  count: number;
  /** High watermark of the partition now. */
  end: string;
  dlt: string;
  dltExists: boolean;
  /** The DLT is missing and the connection allows the console to create it. */
  willCreate: boolean;
  members: GroupMemberRef[];
  /** Kafka lets the console set the group's offsets only while it has no members. */
  canRunNow: boolean;
}

function groupOps(connectionId: string): {
  ops: ConsumerGroupOps;
  createDlt: boolean;
  dlts: Array<{ group: string; dlt: string }>;
} {
  const adapter = adapterFor(connectionId);
  const config = consumerGroupsConfigOf(loadConfig().connections.find((c) => c.id === connectionId));
  if (!adapter.consumerGroups || !config) {
    throw new AppError("bad_request:consumer-groups", {
      userMessage: `${adapter.displayName} has no consumer groups with committed offsets: there is nothing to skip.`,
    });
  }
  return { ops: adapter.consumerGroups, createDlt: config.createDlt, dlts: config.dlts };
}

/** Whether a topic exists: an offset past any end reads no record, only the partition's range (missing topic: not_found). */
async function topicExists(ops: ConsumerGroupOps, topic: string): Promise<boolean> {
  try {
    await ops.recordAt({ topic, partition: 0, offset: 2n ** 62n });
    return true;
  } catch (e) {
    // By the error's brand, not instanceof: the adapter may come from another bundle of the server
    // (instrumentation's), whose BrokerError class is not this one.
    if (asAppError(e)?.type === "not_found") return false;
    throw e;
  }
}

/** The partition as it is now, and what skipping up to `upToOffset` would mean. Reads only; audits nothing. */
async function lookAt(input: z.output<typeof planSchema>): Promise<SkipPlan> {
  const { connectionId, groupId, topic, partition } = input;
  const { ops, createDlt, dlts } = groupOps(connectionId);
  const round = await withTimeout(ops.read(), 30_000, "read consumer groups");
  const group = round.groups.find((g) => g.groupId === groupId);
  if (!group) {
    if (round.brokersNotListed.length)
      throw new AppError("unavailable:broker", {
        userMessage: `Some brokers did not list their consumer groups just now, and "${groupId}" was not among the others. Try again in a moment.`,
      });
    throw new AppError("not_found:consumer-group", {
      userMessage: `There is no consumer group "${groupId}" on this connection.`,
    });
  }
  const p = group.partitions.find((x) => x.topic === topic && x.partition === partition);
  if (!p)
    throw new AppError("not_found:consumer-group", {
      userMessage: `Consumer group "${groupId}" has no committed offset or assignment on ${topic}/${partition}.`,
    });
  if (p.end === null)
    throw new AppError("unavailable:broker", {
      userMessage: `The end of ${topic}/${partition} could not be read just now. Try again in a moment.`,
    });
  const at = await withTimeout(
    ops.recordAt({ topic, partition, offset: p.committed }, { maxBodyBytes: 1 }),
    30_000,
    "read the record at the committed offset",
  );
  if (at.kind === "gone") {
    throw new AppError("bad_request:group-skip", {
      userMessage: `The records at the committed offset of ${topic}/${partition} were deleted by retention (the log starts at ${at.start}): there is nothing to copy. The group's consumer resets by its auto.offset.reset.`,
    });
  }
  if (at.kind === "none")
    throw new AppError("bad_request:group-skip", {
      userMessage: `Group "${groupId}" has read everything in ${topic}/${partition}: nothing to skip.`,
    });
  const upTo = input.upToOffset ?? at.offset;
  if (upTo < at.offset || upTo >= p.end) {
    throw new AppError("bad_request:group-skip", {
      userMessage: `Skip up to offset ${upTo} is outside what the group has left to read in ${topic}/${partition} (${at.offset} to ${p.end - 1n}).`,
    });
  }
  const dlt = dltNameFor({ dlts }, groupId, topic);
  const dltExists = await withTimeout(topicExists(ops, dlt), 30_000, "look for the DLT");
  const members = group.members.map((m) => ({ memberId: m.memberId, clientId: m.clientId, host: m.host }));
  return {
    connectionId,
    groupId,
    topic,
    partition,
    committed: p.committed === null ? null : p.committed.toString(),
    firstOffset: at.offset.toString(),
    upToOffset: upTo.toString(),
    count: Number(upTo - at.offset + 1n),
    end: p.end.toString(),
    dlt,
    dltExists,
    willCreate: !dltExists && createDlt,
    members,
    canRunNow: members.length === 0,
  };
}

/**
 * What a skip of one partition would do now: the committed offset, the records it would skip (by
 * default the one at the committed offset) and their count, the DLT, and the group's members.
 * Refuses a connection without consumer groups (bad_request), an unknown group or partition
 * (not_found), an `upToOffset` outside what the group has left to read (bad_request). Audited
 * `group.skip_plan`.
 */
export async function planSkip(actor: Actor, meta: RequestMeta, input: unknown): Promise<SkipPlan> {
  const scope = rawScope(input, "group.skip_plan");
  await authorize(actor, "groups:skip", { ...scope, meta });
  return audited(
    actor,
    meta,
    scope,
    async () => lookAt(parseInput(planSchema, input, "bad_request:group-skip")),
    (r) => ({
      groupId: r.groupId,
      topic: r.topic,
      partition: r.partition,
      committed: r.committed,
      upToOffset: r.upToOffset,
      count: r.count,
      dlt: r.dlt,
      members: r.members.length,
    }),
  );
}

export interface SkipView extends JobViewBase {
  /** What the admin confirmed: group, topic, partition, offsets, count, DLT, reason, waitForEmpty. */
  params: GroupSkipParams;
  /** Waiting: the members; done: committedBefore/After, dlt, copies (see GroupSkipProgress). */
  progress: Partial<GroupSkipProgress>;
  /** The id of the user who started it. */
  createdBy: string | null;
  /** Their e-mail, what the page names them by; null when the account no longer exists. */
  createdByEmail: string | null;
}

function toView(j: JobRecord, emails: ReadonlyMap<string, string>): SkipView {
  return {
    ...jobViewBase(j),
    params: j.params as unknown as GroupSkipParams,
    progress: (j.progress ?? {}) as Partial<GroupSkipProgress>,
    createdBy: j.createdBy,
    createdByEmail: j.createdBy ? (emails.get(j.createdBy) ?? null) : null,
  };
}

/** The e-mails of the users who started these jobs, by user id. */
async function creatorEmails(jobs: JobRecord[]): Promise<Map<string, string>> {
  const ids = [...new Set(jobs.map((j) => j.createdBy).filter((x): x is string => !!x))];
  if (!ids.length) return new Map();
  const users = await getDb().user.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } });
  return new Map(users.map((u) => [u.id, u.email]));
}

async function viewOf(j: JobRecord): Promise<SkipView> {
  return toView(j, await creatorEmails([j]));
}

function assertConfirmedCount(n: number, confirmed: number): void {
  if (n === confirmed) return;
  throw new AppError("conflict:count", {
    userMessage: `The skip now covers ${n} record${n === 1 ? "" : "s"}, not the ${confirmed} you confirmed. Review the count and confirm again.`,
    details: { count: n },
  });
}

/**
 * Starts a skip the admin confirmed: the committed offset must still be `expectedCommitted`
 * (conflict:committed-offset), the count `confirmedCount` (conflict:count); a group with members is
 * refused (ConsumerGroupActiveError, 409, naming them) unless `waitForEmpty`, when the job waits
 * for the group to be empty. Queues a `group-skip` job (queue = the topic) and audits `group.skip`
 * under the job's id; refusals are audited `group.skip` failure. Returns the job's view.
 */
export async function startSkip(actor: Actor, meta: RequestMeta, input: unknown): Promise<SkipView> {
  const scope = rawScope(input, "group.skip");
  await authorize(actor, "groups:skip", { ...scope, meta });
  const refused = (e: unknown) =>
    recordAudit({
      actor: auditActor(actor),
      action: scope.action,
      outcome: "failure",
      connectionId: scope.connectionId,
      queue: scope.queue,
      target: scope.target,
      requestId: meta.requestId,
      ip: meta.ip,
      details: { error: errorCodeOf(e), ...membersOf(e) },
    }).catch(() => undefined);
  let job: JobRecord;
  let params: GroupSkipParams;
  try {
    const s = parseInput(startSchema, input, "bad_request:group-skip");
    const plan = await lookAt(s);
    const expected = s.expectedCommitted === null ? null : s.expectedCommitted.toString();
    if (plan.committed !== expected) {
      throw new CommittedOffsetMovedError(
        s.groupId,
        s.topic,
        s.partition,
        s.expectedCommitted,
        plan.committed === null ? null : BigInt(plan.committed),
      );
    }
    assertConfirmedCount(plan.count, s.confirmedCount);
    if (!plan.canRunNow && !s.waitForEmpty) throw new ConsumerGroupActiveError(s.groupId, plan.members);
    params = {
      groupId: s.groupId,
      topic: s.topic,
      partition: s.partition,
      expectedCommitted: expected,
      upToOffset: plan.upToOffset,
      count: plan.count,
      dlt: plan.dlt,
      createDlt: plan.willCreate,
      reason: s.reason,
      waitForEmpty: s.waitForEmpty,
    };
    job = await jobStore().enqueue({
      kind: "group-skip",
      connectionId: s.connectionId,
      queue: s.topic,
      params: { ...params },
      createdBy: actor.id,
    });
  } catch (e) {
    await refused(e);
    throw e;
  }
  await recordAudit(jobActEntry(actor, meta, job, scope.action, "success", { ...params, jobId: job.id }));
  wakeJobWorker();
  return toView(job, new Map([[actor.id, actor.email]]));
}

function membersOf(e: unknown): Record<string, unknown> {
  const members = (e as { details?: { members?: unknown } })?.details?.members;
  return Array.isArray(members) ? { members } : {};
}

async function loadSkip(jobId: string): Promise<JobRecord> {
  const job = await jobStore().get(jobId);
  if (job?.kind !== "group-skip") throw new AppError("not_found:group-skip", { userMessage: "There is no such skip." });
  return job;
}

/** Cancels a skip: a queued or waiting one stops without copying anything. Audited `group.skip_cancel`. */
export async function cancelSkip(actor: Actor, meta: RequestMeta, input: unknown): Promise<SkipView> {
  const scope = jobScope(input, "group.skip_cancel");
  await authorize(actor, "groups:skip", { ...scope, meta });
  const job = await loadSkip(parseInput(jobRef, input, "bad_request:group-skip").jobId);
  const entry = (outcome: "success" | "failure", details: Record<string, unknown>) =>
    jobActEntry(actor, meta, job, scope.action, outcome, details);
  const params = job.params as unknown as GroupSkipParams;
  try {
    // The request and its audit row commit together, before the worker can finish the skip.
    await jobStore().requestCancel(job.id, {}, (tx, state) =>
      recordAuditIn(
        tx,
        entry("success", {
          jobId: job.id,
          state,
          groupId: params.groupId,
          topic: params.topic,
          partition: params.partition,
        }),
      ),
    );
  } catch (e) {
    await recordAudit(entry("failure", { error: errorCodeOf(e) })).catch(() => undefined);
    throw e;
  }
  return viewOf((await jobStore().get(job.id))!);
}

/** One skip with its progress. `groups:read`; a refusal is audited `group.skip_view`. */
export async function viewSkip(actor: Actor, meta: RequestMeta, input: unknown): Promise<SkipView> {
  await authorize(actor, "groups:read", { ...jobScope(input, "group.skip_view"), meta });
  return viewOf(await loadSkip(parseInput(jobRef, input, "bad_request:group-skip").jobId));
}

/** A connection's skips (one group's, with `groupId`), newest 50. `groups:read`; a refusal is audited `group.skip_list`. */
export async function listSkips(actor: Actor, meta: RequestMeta, input: unknown): Promise<SkipView[]> {
  const scope = rawScope(input, "group.skip_list");
  await authorize(actor, "groups:read", { ...scope, meta });
  const q = parseInput(listSchema, input, "bad_request:group-skip");
  const jobs = await getDb().job.findMany({
    where: {
      kind: "group-skip",
      connectionId: q.connectionId,
      ...(q.groupId ? { params: { path: ["groupId"], equals: q.groupId } } : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: 50,
  });
  const emails = await creatorEmails(jobs);
  return jobs.map((j) => toView(j, emails));
}
