import "server-only";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { JobKind, JobRecord, JobState } from "./types";

export interface JobPageFilter {
  kinds: readonly string[];
  connectionId?: string;
  queue?: string;
  state?: JobState;
}

/**
 * A cursor names the last job of a page by its sort key (createdAt, id), so the next page starts
 * right after it however many jobs were created meanwhile (they are newer and sort first).
 */
function encodeCursor(j: JobRecord): string {
  return Buffer.from(JSON.stringify([j.createdAt.toISOString(), j.id])).toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const bad = new AppError("bad_request:cursor", {
    userMessage: "The cursor is not valid: pass the `nextCursor` of the previous page unchanged.",
  });
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== "string" || typeof v[1] !== "string") throw bad;
    const createdAt = new Date(v[0]);
    if (Number.isNaN(createdAt.getTime()) || !/^[0-9a-f-]{36}$/i.test(v[1])) throw bad;
    return { createdAt, id: v[1] };
  } catch {
    throw bad;
  }
}

/**
 * Jobs newest first, one keyset page at a time (JobStore.list has no cursor). `nextCursor` is null
 * on the last page. Does no authorization: callers filter `kinds` to what the actor may read.
 */
export async function jobsPage(
  filter: JobPageFilter,
  page: { cursor?: string; limit: number },
): Promise<{ jobs: JobRecord[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(Math.trunc(page.limit), 1), 200);
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  const where: Prisma.JobWhereInput = {
    kind: { in: [...filter.kinds] as JobKind[] },
    ...(filter.connectionId ? { connectionId: filter.connectionId } : {}),
    ...(filter.queue ? { queue: filter.queue } : {}),
    ...(filter.state ? { state: filter.state } : {}),
    ...(after
      ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }
      : {}),
  };
  const rows = await getDb().job.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: limit + 1 });
  const jobs = rows.slice(0, limit);
  return { jobs, nextCursor: rows.length > limit ? encodeCursor(jobs[jobs.length - 1]) : null };
}
