import "server-only";
import type { Role } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { maskTextWithRules } from "@/lib/masking/engine";
import { maskingHashKey } from "@/lib/masking/key";
import { policyFrom } from "@/lib/masking/policy";
import { loadMaskingConfig } from "@/lib/masking/store";
import { groupName, type TopFailure } from "./top-failure-view";

/**
 * Every scanned DLQ's largest triage group, in one query over the group summaries (never the
 * letters): the group page's own class/reason key, the share of the scan's letters, and when the
 * DLQ's last scan finished. The message passes the role's masking rules, as on the group page.
 */
export async function scannedTopFailures(role: Role, db: PrismaClient = getDb()): Promise<TopFailure[]> {
  const [rows, masking] = await Promise.all([
    db.$queryRawUnsafe<
      Array<{
        connection_id: string;
        queue: string;
        basis: string;
        exception_class: string | null;
        reason: string | null;
        normalized_message: string | null;
        count: number;
        total: number;
        refreshed: Date;
        finished: Date | null;
        tailed: Date | null;
      }>
    >(
      `WITH g AS (
         SELECT connection_id, queue, group_key, basis, exception_class, reason, normalized_message, count,
                sum(count) OVER w::int AS total, max(refreshed_at) OVER w AS refreshed,
                row_number() OVER (PARTITION BY connection_id, queue ORDER BY count DESC, group_key ASC) AS rn
           FROM triage_groups WHERE count > 0
         WINDOW w AS (PARTITION BY connection_id, queue)
       )
       SELECT g.connection_id, g.queue, g.basis, g.exception_class, g.reason, g.normalized_message, g.count, g.total,
              g.refreshed, j.finished_at AS finished, s.indexed_at AS tailed
         FROM g
         LEFT JOIN triage_index_state s
           ON s.connection_id = g.connection_id AND s.queue = g.queue AND s.mode = 'tail' AND s.indexed_at IS NOT NULL
         LEFT JOIN LATERAL (
           SELECT finished_at FROM jobs
            WHERE connection_id = g.connection_id AND queue = g.queue AND kind = 'scan' AND state = 'succeeded'
            ORDER BY created_at DESC LIMIT 1
         ) j ON true
        WHERE g.rn = 1`,
    ),
    loadMaskingConfig(),
  ]);
  const hashKey = maskingHashKey();
  return rows.map((r) => {
    const basis = r.basis === "reason" ? "reason" : "exception";
    const policy = policyFrom(masking, role, r.connection_id, r.queue, hashKey);
    const message =
      r.normalized_message && policy.rules.length
        ? maskTextWithRules(r.normalized_message, policy.rules, policy.hashKey).text
        : r.normalized_message;
    // A scan's groups are also refreshed after a redrive or discard: the newer of the two is "as of".
    const at = r.finished && r.finished > r.refreshed ? r.finished : r.refreshed;
    // Groups the indexer keeps current by reading only new letters (lib/triage/indexer.ts) are not a scan's.
    const indexed = r.tailed !== null && (r.finished === null || r.refreshed > r.finished);
    return {
      connectionId: r.connection_id,
      queue: r.queue,
      basis,
      label: groupName({ basis, exceptionClass: r.exception_class, reason: r.reason }),
      message,
      count: r.count,
      total: r.total,
      source: indexed ? ("index" as const) : ("scan" as const),
      at: at.toISOString(),
    };
  });
}

/** Per DLQ, its failure groups that need someone: new (never acknowledged) and regressed. */
export interface DlqAttention {
  connectionId: string;
  queue: string;
  new: number;
  regressed: number;
}

/** Every DLQ with a new or regressed failure group (one aggregate over the issues' state). */
export async function attentionByDlq(db: Pick<PrismaClient, "$queryRawUnsafe"> = getDb()): Promise<DlqAttention[]> {
  const rows = await db.$queryRawUnsafe<
    Array<{ connection_id: string; queue: string; new: number; regressed: number }>
  >(
    `SELECT connection_id, queue,
            count(*) FILTER (WHERE state = 'new')::int AS new,
            count(*) FILTER (WHERE state = 'regressed')::int AS regressed
     FROM failure_issues WHERE state IN ('new', 'regressed')
     GROUP BY connection_id, queue`,
  );
  return rows.map((r) => ({ connectionId: r.connection_id, queue: r.queue, new: r.new, regressed: r.regressed }));
}
