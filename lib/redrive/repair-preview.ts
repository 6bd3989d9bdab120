import "server-only";
import { z } from "zod";
import { recordAudit } from "@/lib/audit";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { maskingPolicy } from "@/lib/masking/policy";
import type { PayloadDiff } from "@/lib/repair/diff-types";
import { assertMayPatchMasked, assertRepairAllowed, readIndexed } from "@/lib/repair/group";
import { type MaskedPatchOutcome, patchNamesMasked, tryPatchMasked } from "@/lib/repair/masked-patch";
import { type PayloadPatch, patchSummary, payloadPatchSchema } from "@/lib/repair/patch";
import { scopedFilter } from "@/lib/triage/masked-search";
import { queryLetters } from "@/lib/triage/queries";
import { auditActor, errorCodeOf } from "@/lib/use-case/audited";
import { dlqSchema, filterOfSelection, type Selection, selectionSchema } from "@/lib/selection/selection";

/**
 * A group repair's preview: the patch tried on every letter of a redrive selection. It
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

interface SelectionLetter {
  letterId: string;
  messageId: string | null;
  payload: { ok: true; bytes: Uint8Array } | { ok: false; reason: string };
}

/**
 * The letters of a redrive selection as the actor's role may select them (as the redrive counts
 * them), newest first, each with its indexed payload, in keyset batches so memory stays bounded.
 */
async function* selectionLetters(
  p: { connectionId: string; queue: string; selection: Selection },
  policy: Awaited<ReturnType<typeof maskingPolicy>>,
): AsyncGenerator<SelectionLetter> {
  const { filter, letterIds } = filterOfSelection(p, p.selection);
  const scoped = scopedFilter(filter, policy);
  const chosen = letterIds ? new Set(letterIds) : null;
  let after: string | null = null;
  do {
    const page = await queryLetters(scoped, { after, limit: PREVIEW_BATCH }, getDb(), { withPayload: true });
    for (const l of page.rows) {
      if (chosen && !chosen.has(l.letterId)) continue;
      yield {
        letterId: l.letterId,
        messageId: l.messageId,
        payload: readIndexed(p.connectionId, p.queue, {
          letterId: l.letterId,
          sha256: l.sha256,
          truncated: l.payloadTruncated,
          ciphertext: l.payloadCiphertext ?? null,
          keyId: l.payloadKeyId ?? null,
        }),
      };
    }
    after = page.nextCursor;
  } while (after);
}

/**
 * The refusal of a patch that tests or changes a value masking hides (or names a field by a masked
 * name), in the operator's words; `found`: in how many of the selection's letters.
 */
function maskedRefusal(first: string, found?: { letters: number; total: number }): AppError {
  const where = found ? ` This is so in ${found.letters} of the ${found.total} letters.` : "";
  return new AppError("forbidden:repair-masked", {
    userMessage: `${first} A group repair cannot test or change values that masking hides: its answers would tell a right guess from a wrong one, and applied for real it would write or compare what nobody saw.${where} Remove or change that operation; to change a masked value, reveal the letter (recorded in the audit log) and repair it on its own.`,
    details: found ? { letters: found.letters } : undefined,
  });
}

/**
 * The patch tried on every letter of the selection, from the triage index (nothing is read from
 * the broker, nothing moves): the first `limit` letters one by one with the diff, and counts of
 * those it applies to and not over the whole selection, decrypted and patched in keyset batches so
 * memory stays bounded whatever the selection's size. Every answer (applies, the reason, unchanged,
 * the diff) comes from the payloads as the actor's role sees them (lib/repair/masked-patch.ts), so
 * none tells a right guess of a masked value from a wrong one, and a value copied or moved from a
 * masked place is shown masked. A patch that tests, changes or removes a masked value is refused
 * (`forbidden:repair-masked`), even for a role that may reveal: a reveal is an audited act on one
 * letter, and a group has none. Needs letter:repair, the config switch and a broker that can
 * repair. Audited `redrive.repair_preview` with the patch's operations and paths (never its
 * values) and the counts.
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
  let patch: PayloadPatch | null = null;
  try {
    const r = previewGroupRepairSchema.safeParse(input);
    if (!r.success) throw invalid(r.error);
    const p = r.data;
    patch = p.patch;
    assertRepairAllowed(p.connectionId, p.queue);
    const policy = await maskingPolicy(actor.role, p.connectionId, p.queue);
    assertMayPatchMasked(actor, policy);
    const mask = { rules: policy.rules, hashKey: policy.hashKey };
    const out: GroupRepairPreview = {
      connectionId: p.connectionId,
      queue: p.queue,
      total: 0,
      applies: 0,
      doesNotApply: 0,
      letters: [],
      truncated: false,
    };
    const named = patchNamesMasked(p.patch, mask);
    if (named) throw maskedRefusal(named);
    let masked: { first: string; letters: number } | null = null;
    for await (const l of selectionLetters(p, policy)) {
      out.total++;
      const shown: boolean = !masked && out.letters.length < p.limit;
      const tried: MaskedPatchOutcome = l.payload.ok
        ? tryPatchMasked(l.payload.bytes, p.patch, mask, shown)
        : { ok: false, reason: l.payload.reason };
      if (!tried.ok && tried.masked) {
        masked ??= { first: tried.reason, letters: 0 };
        masked.letters++;
        continue;
      }
      if (tried.ok) out.applies++;
      else out.doesNotApply++;
      if (!shown) continue;
      out.letters.push({
        letterId: l.letterId,
        messageId: l.messageId,
        applies: tried.ok,
        reason: tried.ok ? null : tried.reason,
        unchanged: tried.ok && tried.unchanged,
        diff: tried.ok ? tried.diff : null,
      });
    }
    if (masked) throw maskedRefusal(masked.first, { letters: masked.letters, total: out.total });
    out.truncated = out.total > out.letters.length;
    await audit("success", {
      scope: p.selection.kind,
      patch: patchSummary(p.patch),
      total: out.total,
      applies: out.applies,
      doesNotApply: out.doesNotApply,
    });
    return out;
  } catch (e) {
    const code = errorCodeOf(e);
    await audit(code.startsWith("forbidden:") ? "denied" : "failure", {
      error: code,
      ...(patch ? { patch: patchSummary(patch) } : {}),
    }).catch(() => undefined);
    throw e;
  }
}

/**
 * Before a group repair starts: the same refusal as its preview's, over the same selection, for a
 * patch that tests or changes a value masking hides from the actor's role (the run would compare
 * or write real values, and its ledger and audit rows would tell the outcome). Input that does not
 * parse is left to the start's own validation. Audited under `action` (denied) when it refuses:
 * `redrive.start`, or `redrive.plan` for a redrive's plan that carries a repair.
 */
export async function assertGroupRepairUnmasked(
  actor: Actor,
  meta: RequestMeta,
  input: unknown,
  action: "redrive.start" | "redrive.plan" = "redrive.start",
): Promise<void> {
  const r = dlqSchema
    .extend({ selection: selectionSchema, repair: z.object({ patch: payloadPatchSchema }) })
    .safeParse(input);
  if (!r.success) return;
  const p = r.data;
  try {
    assertRepairAllowed(p.connectionId, p.queue);
  } catch {
    return; // the start refuses it, audited, with its own words
  }
  const policy = await maskingPolicy(actor.role, p.connectionId, p.queue);
  const mask = { rules: policy.rules, hashKey: policy.hashKey };
  if (mask.rules.length === 0) return;
  const refuse = async (e: AppError) => {
    await recordAudit({
      actor: auditActor(actor),
      action,
      outcome: "denied",
      connectionId: p.connectionId,
      queue: p.queue,
      requestId: meta.requestId,
      ip: meta.ip,
      details: { error: e.code, repair: true, patch: patchSummary(p.repair.patch) },
    });
    return e;
  };
  const named = patchNamesMasked(p.repair.patch, mask);
  if (named) throw await refuse(maskedRefusal(named));
  let total = 0;
  let masked: { first: string; letters: number } | null = null;
  for await (const l of selectionLetters(p, policy)) {
    total++;
    if (!l.payload.ok) continue;
    const tried = tryPatchMasked(l.payload.bytes, p.repair.patch, mask, false);
    if (!tried.ok && tried.masked) {
      masked ??= { first: tried.reason, letters: 0 };
      masked.letters++;
    }
  }
  if (masked) throw await refuse(maskedRefusal(masked.first, { letters: masked.letters, total }));
}
