import "server-only";
import { recordAudit, recordAuditBatch } from "@/lib/audit";
import type { AuditEntry } from "@/lib/audit/types";
import type { GroupMemberRef, SkipCopy, SkipResult } from "@/lib/brokers/contract/consumer-groups";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { getAdapter } from "@/lib/connections/registry";
import { AppError, asAppError } from "@/lib/errors";
import { jobAuditEntry } from "@/lib/jobs/audit";
import { consoleStopping } from "@/lib/jobs/ledger";
import { recordCommittedMove } from "./store";
import type { JobContext, JobHandler, JobOutcome, JobProgress, JobRecord } from "@/lib/jobs/types";

/** What startSkip fixed when the admin confirmed (offsets as decimal strings: JSON has no bigint). */
export interface GroupSkipParams {
  groupId: string;
  topic: string;
  partition: number;
  /** The committed offset the admin saw (null: none); the skip is refused when it moved. */
  expectedCommitted: string | null;
  /** Last offset skipped, inclusive. */
  upToOffset: string;
  /** Offsets from the first record at the committed offset to `upToOffset`, as confirmed. */
  count: number;
  dlt: string;
  createDlt: boolean;
  reason: string;
  /** Wait for the group to be empty; false: a group with members fails the job. */
  waitForEmpty: boolean;
}

export interface SkipCopyView {
  /** Offset of the skipped record in the source partition. */
  offset: string;
  dltPartition: number;
  dltOffset: string;
}

export interface GroupSkipProgress extends JobProgress {
  /** waiting: the group has members; skipping: copying and committing; done: the offset moved. */
  phase: "waiting" | "skipping" | "done";
  waiting: boolean;
  /** The group's members at the last look (while waiting). */
  members: GroupMemberRef[];
  checkedAt: string;
  committedBefore?: string | null;
  committedAfter?: string;
  dlt?: string;
  dltCreated?: boolean;
  /** The copies made, in offset order (also those kept in the DLT when the skip failed after copying). */
  copies?: SkipCopyView[];
  /** The offset was moved by an earlier run of this job that stopped before recording it; its copies' DLT offsets are unknown here. */
  resumed?: boolean;
}

interface Deps {
  adapterFor: (connectionId: string) => BrokerAdapter;
  /** How often a waiting job looks at the group's members (default DLQ_GROUP_SKIP_POLL_MS or 3000). */
  pollMs: number;
}

const copyView = (c: SkipCopy): SkipCopyView => ({
  offset: c.offset.toString(),
  dltPartition: c.dltPartition,
  dltOffset: c.dltOffset.toString(),
});
/** A Kafka letter's id in the console (lib/brokers/kafka/discovery.ts letterIdOf): partition-offset. */
const dltLetterId = (c: SkipCopyView) => `${c.dltPartition}-${c.dltOffset}`;

/**
 * The `group-skip` job: moves the records a consumer group is stuck on to its DLT and sets the
 * group's committed offset past them (BrokerAdapter.consumerGroups.skipToDlt).
 *
 * While the group has members (and the admin chose to wait), the job records them in its progress
 * and looks again every few seconds, until the group is empty or the job is cancelled (a cancelled
 * waiting job copies nothing and leaves the offset). Then one skipToDlt call: it refuses when the
 * committed offset is no longer the one the admin confirmed (the job fails with its words, nothing
 * skipped), copies each record to the DLT confirmed, and only then commits. Each copy is audited
 * `group.skipped` (scope letter; queue = the DLT, target = the copy's letter id there), and the end
 * `group.skip_finished` with the offsets before and after.
 *
 * Crash safety: before skipToDlt the job checkpoints `phase: "skipping"`.
 * - A crash after some copies but before the commit leaves the committed offset where it was; the
 *   resumed run (another worker, after the lease) calls skipToDlt again with the same expected
 *   offset, which copies every record again and commits: the DLT holds duplicates of the first
 *   copies (same origin headers, so they are recognisable), never a record lost.
 * - A crash after the commit but before the job recorded it: the resumed run's skipToDlt finds
 *   the committed offset at `upToOffset + 1` instead of the expected one and refuses before
 *   copying. Because this job had reached the skipping phase, the handler takes that as its own
 *   commit and ends succeeded with `resumed: true` (the copies' DLT offsets are in the DLT's
 *   kafka_dlt-original-* headers, not in the audit log). Any other committed offset fails the job.
 * - A copy failure, or a member that joined between the copies and the commit, fails the job with
 *   the offset unchanged; the copies already made are audited `group.skip_copied` (kept in the
 *   DLT, outcome failure) so a retry's duplicates can be told apart.
 */
export function groupSkipHandler(deps: Partial<Deps> = {}): JobHandler {
  const envPoll = Number(process.env.DLQ_GROUP_SKIP_POLL_MS);
  const d: Deps = { adapterFor: getAdapter, pollMs: envPoll > 0 ? envPoll : 3000, ...deps };
  return (ctx) => runGroupSkip(ctx, d);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

const stopping = () => consoleStopping("The console stopped; the skip resumes when a console runs again.");

async function runGroupSkip(ctx: JobContext, d: Deps): Promise<JobOutcome> {
  const { job } = ctx;
  const p = job.params as unknown as GroupSkipParams;
  const ops = d.adapterFor(job.connectionId).consumerGroups;
  if (!ops)
    throw new AppError("bad_request:consumer-groups", {
      userMessage: "This connection has no consumer groups: nothing was skipped.",
    });
  const resumedFromSkipping = (job.checkpoint as { phase?: string } | null)?.phase === "skipping";
  const progress: GroupSkipProgress = {
    phase: "waiting",
    waiting: false,
    members: [],
    checkedAt: new Date().toISOString(),
  };
  const cancelled = async () => {
    await recordAudit(
      endEntry(job, p, "cancelled", {
        committedBefore: p.expectedCommitted,
        committedAfter: p.expectedCommitted,
        copied: 0,
      }),
    );
    return { state: "cancelled", progress: { ...progress, waiting: false } } as const;
  };

  if (job.cancelRequested) return cancelled();
  for (;;) {
    const members = await ops.members(p.groupId);
    progress.checkedAt = new Date().toISOString();
    progress.members = members;
    if (members.length === 0 || !p.waitForEmpty) break;
    progress.waiting = true;
    if ((await ctx.checkpoint({ progress })).cancelRequested) return cancelled();
    await sleep(d.pollMs, ctx.signal);
    if (ctx.signal.aborted) throw stopping();
  }
  // A group with members here is refused by skipToDlt itself (ConsumerGroupActiveError, nothing copied).
  Object.assign(progress, { phase: "skipping", waiting: false });
  if ((await ctx.checkpoint({ progress, checkpoint: { phase: "skipping" } })).cancelRequested) return cancelled();
  if (ctx.signal.aborted) throw stopping();

  const upTo = BigInt(p.upToOffset);
  let res: SkipResult;
  try {
    res = await ops.skipToDlt({
      groupId: p.groupId,
      topic: p.topic,
      partition: p.partition,
      expectedCommitted: p.expectedCommitted === null ? null : BigInt(p.expectedCommitted),
      upToOffset: upTo,
      dlt: p.dlt,
      createDlt: p.createDlt,
      reason: p.reason,
      signal: ctx.signal,
    });
  } catch (e) {
    const err = asAppError(e);
    const actual = (err?.details as { actual?: string } | undefined)?.actual;
    // CommittedOffsetMovedError, by code: Next may bundle more than one copy of its class.
    if (resumedFromSkipping && err?.code === "conflict:committed-offset" && actual === (upTo + 1n).toString()) {
      // This job's earlier run committed and stopped before recording it (see the file's comment).
      Object.assign(progress, {
        phase: "done",
        resumed: true,
        committedBefore: p.expectedCommitted,
        committedAfter: actual,
        dlt: p.dlt,
        copies: [],
      });
      await recordAudit(
        endEntry(job, p, "succeeded", {
          committedBefore: p.expectedCommitted,
          committedAfter: actual,
          copied: null,
          resumed: true,
        }),
      );
      return { state: "succeeded", progress };
    }
    if (ctx.signal.aborted && !err) throw stopping();
    const copies = (
      (err?.details as { copies?: Array<{ offset: string; dltPartition: number; dltOffset: string }> } | undefined)
        ?.copies ?? []
    ).map((c) => ({ ...c }));
    if (copies.length) {
      await recordAuditBatch(copies.map((c) => copyEntry(job, p, c, "group.skip_copied", "failure")));
      Object.assign(progress, { copies, committedBefore: p.expectedCommitted, dlt: p.dlt });
      await ctx.checkpoint({ progress }).catch(() => undefined);
    }
    throw e;
  }

  const copies = res.copies.map(copyView);
  const committedBefore = res.committedBefore === null ? null : res.committedBefore.toString();
  const committedAfter = res.committedAfter.toString();
  Object.assign(progress, {
    phase: "done",
    committedBefore,
    committedAfter,
    dlt: res.dlt,
    dltCreated: res.dltCreated,
    copies,
    members: [],
  });
  await recordAuditBatch(
    copies.map((c) => copyEntry(job, p, c, "group.skipped", "success", { committedBefore, committedAfter })),
  );
  await recordCommittedMove(job.connectionId, p.groupId, p.topic, p.partition, res.committedAfter).catch((e) =>
    console.warn(`[groups] the skipped offset of ${p.groupId} was not stored: ${(e as Error).message}`),
  );
  await recordAudit(
    endEntry(job, p, "succeeded", {
      committedBefore,
      committedAfter,
      copied: copies.length,
      dltCreated: res.dltCreated,
    }),
  );
  return { state: "succeeded", progress };
}

function copyEntry(
  job: JobRecord,
  p: GroupSkipParams,
  c: SkipCopyView,
  action: string,
  outcome: "success" | "failure",
  extra: Record<string, unknown> = {},
): AuditEntry {
  return jobAuditEntry(job, action, {
    outcome,
    scope: "letter",
    queue: p.dlt,
    target: dltLetterId(c),
    details: {
      groupId: p.groupId,
      topic: p.topic,
      partition: p.partition,
      offset: c.offset,
      dlt: p.dlt,
      dltPartition: c.dltPartition,
      dltOffset: c.dltOffset,
      reason: p.reason,
      ...extra,
    },
  });
}

function endEntry(
  job: JobRecord,
  p: GroupSkipParams,
  state: "succeeded" | "cancelled",
  extra: Record<string, unknown>,
): AuditEntry {
  return jobAuditEntry(job, "group.skip_finished", {
    details: {
      state,
      groupId: p.groupId,
      topic: p.topic,
      partition: p.partition,
      upToOffset: p.upToOffset,
      dlt: p.dlt,
      reason: p.reason,
      ...extra,
    },
  });
}
