import "server-only";
import type { SampleEvidence, TargetReaders } from "@/lib/brokers/target-readers";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { RedriveTarget } from "@/lib/brokers/contract/move";
import { AppError } from "@/lib/errors";
import type { Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import { unknownEvidence, type SampleVerdict, type SampleWatchRecord, type TargetMark } from "./sample-verdict";

/**
 * The sample watch's looks at the targets, through `BrokerAdapter.sampleWatch`
 * (lib/brokers/target-readers.ts): which targets the sample's copies went to, a mark on each right
 * after they were confirmed, and after the watch the evidence that a reader took them. A broker
 * that is away throws (the job pauses and asks again when it resumes); any other failed look is
 * evidence of its own ("unknown", with the reason), never a clean verdict.
 */

/** At most this many targets are marked and looked at (a sample of letters from many origins). */
const MAX_TARGETS = 20;

const isAway = (e: unknown) => e instanceof BrokerError && (e.kind === "unreachable" || e.kind === "throttled");
const why = (e: unknown) =>
  e instanceof AppError ? e.userMessage : "the broker's answer could not be read (the console's log has the detail)";

function cannotTell(adapter: BrokerAdapter, target: string): string {
  return `${adapter.displayName} cannot tell who reads ${adapter.vocabulary.queue} ${target}, nor whether anything took the sample's copies there.`;
}

/**
 * Where the sample's copies went: the target each move reported (`MoveResult.target`, in `known` by
 * letter id), else the plan's named target, else (back to origin) each letter's origin as the
 * triage index recorded it. Letters a previous run moved have no reported target: they fall back.
 */
export async function sampleTargets(
  db: PrismaClient,
  plan: { jobId: string; connectionId: string; queue: string; target: unknown },
  known: ReadonlyMap<string, string>,
): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<Array<{ letter_id: string; origin_queue: string | null }>>(
    `SELECT r.letter_id, t.origin_queue
       FROM redrive_letters r
       LEFT JOIN triage_letters t ON t.connection_id = $2 AND t.queue = $3 AND t.letter_id = r.letter_id
      WHERE r.job_id = $1::uuid AND r.stage = 'sample' AND r.state IN ('moved', 'unconfirmed', 'returned')
      ORDER BY r.seq`,
    plan.jobId,
    plan.connectionId,
    plan.queue,
  );
  const target = plan.target as RedriveTarget;
  const names = new Set<string>();
  for (const r of rows) {
    const name = known.get(r.letter_id) ?? (target.kind === "queue" ? target.name : r.origin_queue);
    if (name) names.add(name);
  }
  return [...names].slice(0, MAX_TARGETS);
}

/** A mark on each target (looked at side by side), right after the sample's copies were confirmed there. */
export async function takeMarks(adapter: BrokerAdapter, targets: readonly string[]): Promise<TargetMark[]> {
  const watch = adapter.sampleWatch;
  return Promise.all(
    targets.map(async (target): Promise<TargetMark> => {
      if (!watch) return { target, mark: null, error: cannotTell(adapter, target) };
      try {
        return { target, mark: await watch.mark(target), error: null };
      } catch (e) {
        if (isAway(e)) throw e;
        return { target, mark: null, error: `No mark could be taken on ${target} after the sample: ${why(e)}` };
      }
    }),
  );
}

/** After the watch: for each marked target, whether a reader took everything that was there at the mark. */
export async function gatherEvidence(adapter: BrokerAdapter, marks: readonly TargetMark[]): Promise<SampleEvidence[]> {
  const watch = adapter.sampleWatch;
  return Promise.all(
    marks.map(async (m): Promise<SampleEvidence> => {
      if (!watch || !m.mark) return unknownEvidence(m.target, m.error ?? cannotTell(adapter, m.target));
      try {
        return await watch.evidence(m.target, m.mark);
      } catch (e) {
        if (isAway(e)) throw e;
        return unknownEvidence(m.target, `The look at ${m.target} after the watch failed: ${why(e)}`);
      }
    }),
  );
}

/** Who reads a target, for the redrive form; a failed look says why instead of failing the form. */
export async function readersOf(
  adapter: BrokerAdapter,
  target: string,
  timeoutMs = 5000,
): Promise<{ readers: TargetReaders | null; error: string | null }> {
  const watch = adapter.sampleWatch;
  if (!watch) return { readers: null, error: cannotTell(adapter, target) };
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    const readers = await Promise.race([watch.readers(target), late]);
    if (!readers)
      return {
        readers: null,
        error: `${adapter.displayName} did not say within ${timeoutMs / 1000} s who reads ${target}.`,
      };
    return { readers, error: null };
  } catch (e) {
    return { readers: null, error: `Could not ask who reads ${target}: ${why(e)}` };
  } finally {
    clearTimeout(timer);
  }
}

/** Stage 1 moved: the watch starts, with the marks kept beside it. */
export async function startWatching(
  db: PrismaClient,
  jobId: string,
  watchUntil: Date,
  record: SampleWatchRecord,
): Promise<void> {
  await db.redrivePlan.update({
    where: { jobId },
    data: { stage: "watching", watchUntil, sampleWatch: record as unknown as Prisma.InputJsonObject },
  });
}

/** The watch is over: the verdict, the sample letters that came back, and the evidence. */
export async function recordVerdict(
  db: PrismaClient,
  jobId: string,
  v: { verdict: SampleVerdict; returned: number; record: SampleWatchRecord },
): Promise<void> {
  await db.redrivePlan.update({
    where: { jobId },
    data: {
      stage: "awaiting_bulk",
      sampleVerdict: v.verdict,
      sampleReturned: v.returned,
      sampleWatch: v.record as unknown as Prisma.InputJsonObject,
    },
  });
}
