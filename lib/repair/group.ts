import "server-only";
import { createHash } from "node:crypto";
import { can, ROLES } from "@/lib/auth/permissions";
import type { Actor } from "@/lib/auth/session";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { loadConfig } from "@/lib/config";
import { decryptPayload, payloadAad } from "@/lib/crypto/payload-cipher";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { maskingHashKey } from "@/lib/masking/key";
import { policyFrom, type MaskingPolicy } from "@/lib/masking/policy";
import { loadMaskingConfig } from "@/lib/masking/store";
import type { MaskingRule } from "@/lib/masking/types";
import { adapterFor } from "@/lib/use-case/connection";
import type { DiffMasking } from "./diff";
import { applyPatch, type PatchOutcome, type PayloadPatch } from "./patch";
import { repairEnabled } from "./policy";

/**
 * Group repair: one JSON patch over many letters of a DLQ, previewed letter by letter
 * here and then sent as a redrive whose plan carries `repair` (lib/redrive/handler.ts applies the
 * patch to each letter it moves). The patch always applies to the payload the triage index holds
 * for the letter; the mover checks that payload's SHA-256 against the broker's copy, so what is
 * previewed, patched and archived is exactly what moves.
 */

/**
 * What a repair (of one letter, or a redrive with a repair) needs besides its permission
 * (letter:repair): the config switch for this DLQ and a broker that can repair. Throws the refusal
 * (the caller audits it).
 */
export function assertRepairAllowed(
  connectionId: string,
  queue: string,
  adapter: BrokerAdapter = adapterFor(connectionId),
): void {
  if (!repairEnabled(loadConfig().repair, connectionId, queue)) {
    throw new AppError("forbidden:repair-disabled", {
      userMessage:
        "Repair and resubmit is not enabled for this DLQ. It is off by default; the console's configuration (repair) names the connections and DLQs where it may be used.",
    });
  }
  if (!adapter.repair) {
    throw new AppError("bad_request:repair-unsupported", {
      userMessage: `Repair and resubmit is not available on this ${adapter.vocabulary.queue}'s broker yet; nothing was read or sent.`,
    });
  }
}

/**
 * A patch is an oracle on the payloads it is tried on (a `test` operation, or whether it applies at
 * all, answers for the real values): on a DLQ where masking hides something from the actor's role,
 * only a role that may reveal payloads may try one. letter:repair is an admin's today, and admins
 * may reveal; this keeps it so if the permissions table ever changes. Even then a reveal is an act
 * on one letter, never implied by the role: a group repair's answers come from the masked payloads,
 * and a patch that tests or changes a masked value is refused (lib/repair/masked-patch.ts).
 */
export function assertMayPatchMasked(actor: Actor, policy: Pick<MaskingPolicy, "rules" | "payload">): void {
  if ((policy.rules.length > 0 || policy.payload === "none") && !can(actor.role, "payload:reveal")) {
    throw new AppError("forbidden:payload:reveal", {
      userMessage:
        "Masking rules hide parts of these payloads from your role; only a role that may reveal them can repair them.",
    });
  }
}

/**
 * The rules a per-letter audit row's diff is masked with: those in force for every role that may
 * read the audit log, so no reader learns from the row a value its role is shown masked elsewhere
 * (a single repair's row and a group repair's rows alike).
 */
export async function auditDiffMasking(connectionId: string, queue: string): Promise<DiffMasking> {
  const config = await loadMaskingConfig();
  const hashKey = maskingHashKey();
  const rules = new Map<string, MaskingRule>();
  for (const role of ROLES.filter((r) => can(r, "audit:read"))) {
    for (const r of policyFrom(config, role, connectionId, queue, hashKey).rules)
      if (!rules.has(r.id)) rules.set(r.id, r);
  }
  return { rules: [...rules.values()], hashKey };
}

/** A letter's payload as the triage index holds it: null ciphertext when the scan kept none. */
export interface IndexedPayload {
  letterId: string;
  sha256: string;
  truncated: boolean;
  ciphertext: Uint8Array | null;
  keyId: string | null;
}

/** The patch applied to one indexed letter, or why it does not apply (never throws). */
export type LetterPatch = (PatchOutcome & { ok: true; before: Uint8Array }) | { ok: false; reason: string };

/** An indexed letter's payload bytes, decrypted and checked against its SHA-256, or why they cannot be used. */
export function readIndexed(
  connectionId: string,
  queue: string,
  p: IndexedPayload,
): { ok: true; bytes: Uint8Array } | { ok: false; reason: string } {
  if (!p.ciphertext || !p.keyId)
    return { ok: false, reason: "The triage index holds no payload for this letter: scan the DLQ again, then retry." };
  if (p.truncated)
    return {
      ok: false,
      reason:
        "The payload is larger than the triage index keeps whole, so the patch cannot be applied to it here; repair this letter on its own.",
    };
  let bytes: Uint8Array;
  try {
    bytes = decryptPayload(
      { keyId: p.keyId, data: Buffer.from(p.ciphertext) },
      payloadAad(connectionId, queue, p.letterId),
    );
  } catch {
    return {
      ok: false,
      reason:
        "The indexed payload could not be decrypted (its key is no longer in the keyring): scan the DLQ again, then retry.",
    };
  }
  if (createHash("sha256").update(bytes).digest("hex") !== p.sha256) {
    return {
      ok: false,
      reason: "The indexed payload does not match the letter's checksum: scan the DLQ again, then retry.",
    };
  }
  return { ok: true, bytes };
}

export function patchIndexed(connectionId: string, queue: string, p: IndexedPayload, patch: PayloadPatch): LetterPatch {
  const read = readIndexed(connectionId, queue, p);
  if (!read.ok) return read;
  const r = applyPatch(read.bytes, patch);
  return r.ok ? { ...r, before: read.bytes } : r;
}

/** The indexed payloads of these letters of one DLQ, by letter id (one query; gone letters included). */
export async function indexedPayloads(
  connectionId: string,
  queue: string,
  letterIds: string[],
): Promise<Map<string, IndexedPayload>> {
  if (letterIds.length === 0) return new Map();
  const rows = await getDb().$queryRawUnsafe<Array<Record<string, unknown>>>(
    `SELECT letter_id, sha256, payload_truncated, payload_ciphertext, payload_key_id FROM triage_letters
     WHERE connection_id = $1 AND queue = $2 AND letter_id = ANY($3::text[])`,
    connectionId,
    queue,
    letterIds,
  );
  return new Map(
    rows.map((r) => [
      r.letter_id as string,
      {
        letterId: r.letter_id as string,
        sha256: r.sha256 as string,
        truncated: Boolean(r.payload_truncated),
        ciphertext: (r.payload_ciphertext as Uint8Array | null) ?? null,
        keyId: (r.payload_key_id as string | null) ?? null,
      },
    ]),
  );
}
