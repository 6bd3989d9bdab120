import "server-only";
import { createHash } from "node:crypto";
import type { AuditEntry } from "@/lib/audit";
import { writeArchive } from "@/lib/archive/store";
import { isRole } from "@/lib/auth/permissions";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import { AppError } from "@/lib/errors";
import type { PrismaClient, RedrivePlan } from "@/lib/generated/prisma/client";
import { payloadDiff } from "@/lib/repair/diff";
import { auditDiffMasking, indexedPayloads, patchIndexed, type LetterPatch } from "@/lib/repair/group";
import type { LedgerRow, LetterAuditContext, Settled } from "./ledger";
import type { RedriveRepair } from "./plan";

/**
 * Group repair inside a redrive (a plan that carries `repair`): the plan's patch applied to each
 * letter the batch mover is about to move, the original archived once its repaired copy is
 * confirmed, and one `letter.repaired` audit row per settled letter. Whether the job may still
 * repair at all is asked with the other runner checks (runner-check.ts).
 */
export class GroupRepair {
  constructor(
    private readonly db: PrismaClient,
    private readonly plan: RedrivePlan,
    private readonly repair: RedriveRepair,
    private readonly audit: LetterAuditContext,
  ) {}

  /** The plan's patch applied to each row's indexed payload, by letter id. */
  async patchesFor(rows: LedgerRow[]): Promise<Map<string, LetterPatch>> {
    const { connectionId, queue } = this.plan;
    const indexed = await indexedPayloads(
      connectionId,
      queue,
      rows.map((r) => r.letterId),
    );
    const out = new Map<string, LetterPatch>();
    for (const r of rows) {
      const p = indexed.get(r.letterId);
      // The ledger's checksum is the one the mover verifies: the patched payload must be of those bytes.
      if (!p)
        out.set(r.letterId, {
          ok: false,
          reason: "The letter is no longer in the triage index: scan the DLQ again, then retry.",
        });
      else out.set(r.letterId, patchIndexed(connectionId, queue, { ...p, sha256: r.sha256 }, this.repair.patch));
    }
    return out;
  }

  /**
   * The original goes to the encrypted archive (under the job's id, with the stated reason) after
   * its repaired copy was confirmed and before it leaves the DLQ; a failed write keeps it there.
   */
  async archiveOriginal(copy: LetterCopy, archived: Map<string, string>): Promise<void> {
    const ctx = {
      jobId: this.plan.jobId,
      connectionId: this.plan.connectionId,
      queue: this.plan.queue,
      reason: `Repaired and resubmitted: ${this.repair.reason}`,
      actor: this.audit.actor,
    };
    try {
      archived.set(copy.letterId, await writeArchive(this.db, ctx, copy));
    } catch (e) {
      if (e instanceof AppError) throw e;
      throw new AppError("unavailable:archive", {
        userMessage:
          "Its archive copy could not be written (database error), so the original was not removed: it stays in the DLQ.",
        cause: e,
      });
    }
  }

  /**
   * One `letter.repaired` row per letter this batch tried to repair and settled (moved, or failed
   * with its reason; letters handed back because the broker went away get theirs when tried
   * again): the diff masked for every audit reader, SHA-256 before and after, the copy and archive
   * ids, under the job's operation id, in the name of the redrive's starter.
   */
  async repairedAudit(
    rows: LedgerRow[],
    patches: Map<string, LetterPatch>,
    settled: Settled[],
    ids: { archived: Map<string, string>; copyIds: Map<string, string> },
  ): Promise<AuditEntry[]> {
    const byId = new Map(settled.map((s) => [s.letterId, s]));
    const final = rows.filter((r) =>
      ["moved", "failed", "missing", "checksum_mismatch"].includes(byId.get(r.letterId)?.state ?? ""),
    );
    if (final.length === 0) return [];
    const mask = await auditDiffMasking(this.plan.connectionId, this.plan.queue);
    return final.map((r) => {
      const s = byId.get(r.letterId)!;
      const pt = patches.get(r.letterId)!;
      const moved = s.state === "moved";
      const after = pt.ok ? (pt.changed ? pt.bytes : pt.before) : null;
      return {
        actor: {
          id: this.audit.actor.id,
          email: this.audit.actor.email,
          role: isRole(this.audit.actor.role) ? this.audit.actor.role : null,
        },
        action: "letter.repaired",
        outcome: moved ? "success" : "failure",
        operationId: this.plan.jobId,
        scope: "letter",
        connectionId: this.plan.connectionId,
        queue: this.plan.queue,
        target: r.letterId,
        details: {
          outcome: s.state,
          reason: moved ? null : s.reason,
          repairReason: this.repair.reason,
          messageId: r.messageId,
          sha256: r.sha256,
          afterSha256: after ? createHash("sha256").update(after).digest("hex") : null,
          diff: pt.ok
            ? {
                payload: payloadDiff(pt.before, pt.changed ? pt.bytes : null, "json", mask),
                headers: [],
                newCorrelationId: false,
              }
            : null,
          copyId: moved ? (ids.copyIds.get(r.letterId) ?? null) : null,
          archiveId: ids.archived.get(r.letterId) ?? null,
          replayId: r.replayId,
        },
      } satisfies AuditEntry;
    });
  }
}
