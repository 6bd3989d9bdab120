import "server-only";
import type { Prisma } from "@/lib/generated/prisma/client";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { getDb } from "@/lib/db";

/**
 * The two ends of a repair, read from its audit row (`letter.repaired`), for a letter page whose
 * letter is not in the DLQ: the original's page says it was repaired and links to the copy; the
 * copy's page (linked from the repair's answer before the copy ever comes back) says where the copy
 * was sent and links to the original in the archive. Nothing is read from the broker.
 */
export interface RepairEnd {
  operationId: string;
  at: Date;
  /** The DLQ the original was repaired from, and its letter id there. */
  queue: string;
  originalLetterId: string;
  /** Where the copy went, its id there, and its letter id if it is dead-lettered again. */
  destination: string | null;
  copyId: string | null;
  copyLetterId: string | null;
  archiveId: string | null;
}

export interface RepairTrail {
  /** This letter was repaired: its copy. */
  repairedAs: RepairEnd | null;
  /** This letter is a repair's copy: its original. */
  copyOf: RepairEnd | null;
}

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

function endOf(row: {
  operationId: string;
  at: Date;
  queue: string | null;
  target: string | null;
  details: Prisma.JsonValue;
}): RepairEnd {
  const d = (row.details ?? {}) as Record<string, unknown>;
  return {
    operationId: row.operationId,
    at: row.at,
    queue: row.queue ?? "",
    originalLetterId: row.target ?? "",
    destination: text(d.destination),
    copyId: text(d.copyId),
    copyLetterId: text(d.copyLetterId),
    archiveId: text(d.archiveId),
  };
}

export async function repairTrail(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId: string; queue: string; letterId: string },
): Promise<RepairTrail> {
  const { connectionId, queue, letterId } = input;
  await authorize(actor, "letter:read", { action: "letter.view", connectionId, queue, target: letterId, meta });
  const db = getDb();
  const select = { operationId: true, at: true, queue: true, target: true, details: true } as const;
  const base = { action: "letter.repaired", outcome: "success", connectionId } as const;
  const [original, copy] = await Promise.all([
    db.auditEvent.findFirst({ where: { ...base, queue, target: letterId }, orderBy: { at: "desc" }, select }),
    db.auditEvent.findFirst({
      where: { ...base, details: { path: ["copyLetterId"], equals: letterId } },
      orderBy: { at: "desc" },
      select,
    }),
  ]);
  return { repairedAs: original ? endOf(original) : null, copyOf: copy ? endOf(copy) : null };
}

/** The repair an archived original was archived by (its operation id), for the archive's page: where the copy went. */
export async function repairOfArchived(
  actor: Actor,
  meta: RequestMeta,
  input: { connectionId: string; queue: string; letterId: string; operationId: string },
): Promise<RepairEnd | null> {
  const { connectionId, queue, letterId, operationId } = input;
  await authorize(actor, "archive:read", { action: "archive.view", connectionId, queue, target: letterId, meta });
  const row = await getDb().auditEvent.findFirst({
    where: { action: "letter.repaired", outcome: "success", operationId, connectionId, queue, target: letterId },
    select: { operationId: true, at: true, queue: true, target: true, details: true },
  });
  return row ? endOf(row) : null;
}
