import "server-only";
import type { ConfigFinding, FindingSeverity } from "@/lib/brokers/contract/inspection";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";

export const SEVERITY_RANK: Record<FindingSeverity, number> = { critical: 3, warning: 2, info: 1 };

/** The finding the sampler adds for any broker: nobody is told when this DLQ fills. */
export function noOwnerFinding(queue: string): ConfigFinding {
  return {
    code: "dlq.no_owner",
    severity: "warning",
    object: `DLQ ${queue}`,
    dlq: queue,
    why: "No team owns this DLQ, so nobody is told when letters arrive in it or are about to expire.",
    fix: 'Name its owner on the Owners page, or add an entry to "owners" in the console config (connection, DLQ name pattern, team, contact).',
  };
}

/**
 * Brings one connection's open findings in line with what this round found: new ones open,
 * present ones are refreshed (last seen, words), missing ones are resolved (the fault was fixed).
 * Resolved rows stay as history; a fault that comes back opens a new row.
 */
export async function reconcileFindings(
  connectionId: string,
  found: ConfigFinding[],
  at: Date,
  db: PrismaClient = getDb(),
): Promise<{ opened: number; resolved: number }> {
  const unique = new Map<string, ConfigFinding>();
  for (const f of found) {
    const k = `${f.code}\u0000${f.object}`;
    const had = unique.get(k);
    if (!had || SEVERITY_RANK[f.severity] > SEVERITY_RANK[had.severity]) unique.set(k, f);
  }
  const rows = [...unique.values()].map((f) => ({
    code: f.code,
    object: f.object,
    queue: f.dlq,
    severity: f.severity,
    why: f.why,
    fix: f.fix,
  }));
  return db.$transaction(async (tx) => {
    const resolved = await tx.$executeRawUnsafe(
      `UPDATE dlq_findings d SET resolved_at = $2::timestamptz
        WHERE d.connection_id = $1 AND d.resolved_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM json_to_recordset($3::json) AS r(code text, object text) WHERE r.code = d.code AND r.object = d.object)`,
      connectionId,
      at.toISOString(),
      JSON.stringify(rows),
    );
    const refreshed = await tx.$queryRawUnsafe<Array<{ code: string; object: string }>>(
      `UPDATE dlq_findings d SET last_seen_at = $2::timestamptz, severity = r.severity, why = r.why, fix = r.fix, queue = r.queue
         FROM json_to_recordset($3::json) AS r(code text, object text, queue text, severity text, why text, fix text)
        WHERE d.connection_id = $1 AND d.resolved_at IS NULL AND d.code = r.code AND d.object = r.object
        RETURNING d.code, d.object`,
      connectionId,
      at.toISOString(),
      JSON.stringify(rows),
    );
    const seen = new Set(refreshed.map((r) => `${r.code}\u0000${r.object}`));
    const fresh = rows.filter((r) => !seen.has(`${r.code}\u0000${r.object}`));
    if (fresh.length) {
      await tx.$executeRawUnsafe(
        `INSERT INTO dlq_findings (id, connection_id, queue, code, severity, object, why, fix, first_seen_at, last_seen_at)
         SELECT gen_random_uuid(), $1, r.queue, r.code, r.severity, r.object, r.why, r.fix, $2::timestamptz, $2::timestamptz
           FROM json_to_recordset($3::json) AS r(code text, object text, queue text, severity text, why text, fix text)`,
        connectionId,
        at.toISOString(),
        JSON.stringify(fresh),
      );
    }
    return { opened: fresh.length, resolved };
  });
}

export interface FindingRow {
  id: string;
  connectionId: string;
  queue: string | null;
  code: string;
  severity: FindingSeverity;
  object: string;
  why: string;
  fix: string;
  firstSeenAt: string;
  lastSeenAt: string;
  resolvedAt: string | null;
  acknowledgedBy: string | null;
  acknowledgedAt: string | null;
  /** The DLQ's owning team, where the finding names a DLQ and an owner matches it. */
  ownerTeam?: string | null;
}

export interface FindingFilter {
  /** open (default), resolved (history), all */
  state?: "open" | "resolved" | "all";
  connectionId?: string;
  queue?: string;
  severity?: FindingSeverity;
}

/** Findings, most severe and newest first; bounded. */
export async function queryFindings(f: FindingFilter, limit = 500, db: PrismaClient = getDb()): Promise<FindingRow[]> {
  const state = f.state ?? "open";
  const rows = await db.dlqFinding.findMany({
    where: {
      ...(state === "open" ? { resolvedAt: null } : state === "resolved" ? { resolvedAt: { not: null } } : {}),
      ...(f.connectionId ? { connectionId: f.connectionId } : {}),
      ...(f.queue ? { queue: f.queue } : {}),
      ...(f.severity ? { severity: f.severity } : {}),
    },
    orderBy: [{ lastSeenAt: "desc" }],
    take: limit,
  });
  return rows
    .map((r) => ({
      id: r.id,
      connectionId: r.connectionId,
      queue: r.queue,
      code: r.code,
      severity: r.severity as FindingSeverity,
      object: r.object,
      why: r.why,
      fix: r.fix,
      firstSeenAt: r.firstSeenAt.toISOString(),
      lastSeenAt: r.lastSeenAt.toISOString(),
      resolvedAt: r.resolvedAt?.toISOString() ?? null,
      acknowledgedBy: r.acknowledgedBy,
      acknowledgedAt: r.acknowledgedAt?.toISOString() ?? null,
    }))
    .sort((a, b) =>
      (a.resolvedAt === null) !== (b.resolvedAt === null)
        ? a.resolvedAt === null
          ? -1
          : 1
        : SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity],
    );
}
