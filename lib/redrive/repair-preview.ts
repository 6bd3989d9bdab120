import "server-only";
import { z } from "zod";
import { recordAudit } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { maskingPolicy } from "@/lib/masking/policy";
import { payloadDiff, type DiffMasking, type PayloadDiff } from "@/lib/repair/diff";
import { assertRepairAllowed, assertMayPatchMasked, patchIndexed } from "@/lib/repair/group";
import { payloadPatchSchema } from "@/lib/repair/patch";
import { scopedFilter } from "@/lib/triage/masked-search";
import { queryLetters } from "@/lib/triage/queries";
import { auditActor, errorCodeOf } from "@/lib/use-case/audited";
import { dlqSchema, filterOfSelection, selectionSchema } from "./plan";

/**
 * A group repair's preview (issue 18): the patch tried on every letter of a redrive selection. It
 * sits with the redrive (whose selection it counts, as the redrive will) and uses lib/repair's
 * patching, so lib/repair needs nothing from lib/redrive (lib/layout.test.ts).
 */
export const previewGroupRepairSchema = dlqSchema.extend({
  selection: selectionSchema,
  patch: payloadPatchSchema,
  /** How many letters are shown one by one (the counts cover the whole selection). */
  limit: z.number().int().min(1).max(200).default(20),
});
export type PreviewGroupRepairInput = z.input<typeof previewGroupRepairSchema>;

export interface GroupRepairLetter {
  letterId: string;
  messageId: string | null;
  applies: boolean;
  /** Why the patch does not apply (null when it does). */
  reason: string | null;
  /** The patch applies but leaves the payload as it was. */
  unchanged: boolean;
  /** The change, masked for the actor's role; null when the patch does not apply. */
  diff: PayloadDiff | null;
}

export interface GroupRepairPreview {
  connectionId: string;
  queue: string;
  /** Letters in the selection (as the actor's role may select them, as the redrive counts them). */
  total: number;
  applies: number;
  doesNotApply: number;
  /** The first `limit` letters, newest first. */
  letters: GroupRepairLetter[];
  /** More letters than shown. */
  truncated: boolean;
}

const PREVIEW_BATCH = 200;

function invalid(e: z.ZodError): AppError {
  const first = e.issues[0];
  const where = first?.path.length ? `${first.path.join(".")}: ` : "";
  return new AppError("bad_request:repair", {
    message: e.message,
    userMessage: `${where}${first?.message ?? "The repair request is not valid."}`,
  });
}

/**
 * The patch tried on every letter of the selection, from the triage index (nothing is read from
 * the broker, nothing moves): the first `limit` letters one by one with the diff masked for the
 * actor's role, and counts of those it applies to and not over the whole selection, decrypted and
 * patched in keyset batches so memory stays bounded whatever the selection's size. Needs
 * letter:repair, the config switch and a broker that can repair. Audited
 * `redrive.repair_preview` (counts, no values).
 */
export async function previewGroupRepair(actor: Actor, meta: RequestMeta, input: unknown): Promise<GroupRepairPreview> {
  const raw = (input ?? {}) as Record<string, unknown>;
  const scope = {
    action: "redrive.repair_preview",
    connectionId: typeof raw.connectionId === "string" ? raw.connectionId : null,
    queue: typeof raw.queue === "string" ? raw.queue : null,
  };
  await authorize(actor, "letter:repair", { ...scope, meta });
  const audit = (outcome: "success" | "failure" | "denied", details: Record<string, unknown>) =>
    recordAudit({
      actor: auditActor(actor),
      action: scope.action,
      outcome,
      connectionId: scope.connectionId,
      queue: scope.queue,
      requestId: meta.requestId,
      ip: meta.ip,
      details,
    });
  try {
    const r = previewGroupRepairSchema.safeParse(input);
    if (!r.success) throw invalid(r.error);
    const p = r.data;
    assertRepairAllowed(p.connectionId, p.queue);
    const policy = await maskingPolicy(actor.role, p.connectionId, p.queue);
    assertMayPatchMasked(actor, policy);
    const { filter, letterIds } = filterOfSelection(p, p.selection);
    const scoped = scopedFilter(filter, policy);
    const chosen = letterIds ? new Set(letterIds) : null;
    const mask: DiffMasking = { rules: policy.rules, hashKey: policy.hashKey };
    const out: GroupRepairPreview = {
      connectionId: p.connectionId,
      queue: p.queue,
      total: 0,
      applies: 0,
      doesNotApply: 0,
      letters: [],
      truncated: false,
    };
    let after: string | null = null;
    do {
      const page = await queryLetters(scoped, { after, limit: PREVIEW_BATCH }, getDb(), { withPayload: true });
      for (const l of page.rows) {
        if (chosen && !chosen.has(l.letterId)) continue;
        const patched = patchIndexed(
          p.connectionId,
          p.queue,
          {
            letterId: l.letterId,
            sha256: l.sha256,
            truncated: l.payloadTruncated,
            ciphertext: l.payloadCiphertext ?? null,
            keyId: l.payloadKeyId ?? null,
          },
          p.patch,
        );
        out.total++;
        if (patched.ok) out.applies++;
        else out.doesNotApply++;
        if (out.letters.length >= p.limit) continue;
        out.letters.push({
          letterId: l.letterId,
          messageId: l.messageId,
          applies: patched.ok,
          reason: patched.ok ? null : patched.reason,
          unchanged: patched.ok && !patched.changed,
          diff: patched.ok ? payloadDiff(patched.before, patched.changed ? patched.bytes : null, "json", mask) : null,
        });
      }
      after = page.nextCursor;
    } while (after);
    out.truncated = out.total > out.letters.length;
    await audit("success", {
      scope: p.selection.kind,
      patch: p.patch.kind,
      total: out.total,
      applies: out.applies,
      doesNotApply: out.doesNotApply,
    });
    return out;
  } catch (e) {
    const code = errorCodeOf(e);
    await audit(code.startsWith("forbidden:") ? "denied" : "failure", { error: code }).catch(() => undefined);
    throw e;
  }
}
