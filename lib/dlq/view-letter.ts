import "server-only";
import { authorize } from "@/lib/auth/authorize";
import { can } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import type { DlqWarning, Letter } from "@/lib/brokers/contract/letter";
import { audited } from "@/lib/use-case/audited";
import { snapshotLetter, type SnapshotLetter } from "./snapshot-letter";
import { adapterFor, connectionInfo, withTimeout } from "@/lib/use-case/connection";
import { maskingPolicy, type MaskingPolicy } from "@/lib/masking/policy";
import { maskedByRule, maskedPayloadView, maskLetterMeta, type LetterMaskingSummary } from "@/lib/letter/mask-letter";
import type { PayloadView } from "@/lib/letter/payload-view";
import type { ConnectionInfo } from "@/lib/use-case/connection";
import { visibleSha256 } from "@/lib/masking/digest";
import { readInTurn, rethrowBusy } from "./busy";

/** Bytes of a payload read for the letter page; the rest is downloadable. */
export const VIEW_MAX_BODY_BYTES = 256 * 1024;
const READ_TIMEOUT_MS = 30_000;

export interface ViewLetterInput {
  connectionId: string;
  queue: string;
  letterId: string;
  acceptRisk?: boolean;
}

/**
 * A letter as the browser may see it: the adapter's Letter without its raw body; payload bytes only
 * as a (masked) view, and only for roles allowed to see payloads.
 */
export interface LetterDetail extends Omit<Letter, "body" | "handled" | "warnings"> {
  handled: Letter["handled"] | null;
  /** Problems found in the letter that did not stop the read (e.g. a checksum mismatch). */
  warnings: DlqWarning[];
  /** Null when the actor's role may not see payloads here (viewers on a sensitive DLQ). Masked on the server. */
  payload: PayloadView | null;
  masking: LetterMaskingSummary;
}

export interface ViewLetterResult {
  connection: ConnectionInfo;
  dlq: DlqSummary;
  /** Null when the letter is no longer in the DLQ (or not read, see needsConfirmation). */
  letter: LetterDetail | null;
  needsConfirmation: boolean;
  canReadPayload: boolean;
  /** The actor may reveal the unmasked payload (payload:reveal), with a reason. */
  canReveal: boolean;
  /** The actor may confirm a risky read (dlq:browse-risky). */
  canConfirm: boolean;
  /**
   * Where reading the DLQ costs letters, the letter as its snapshot holds it (null: not in the
   * snapshot); the broker is not read. Absent for every other DLQ.
   */
  snapshot?: SnapshotLetter | null;
}

/**
 * A letter read from the broker as the browser may see it under `policy`: headers, properties and
 * failure fields masked, the payload only as a masked view and only when `showPayload`. The letter
 * must have been read with maxBodyBytes 0 when not `showPayload`.
 */
export function letterDetailOf(l: Letter, policy: MaskingPolicy, showPayload: boolean): LetterDetail {
  const meta = maskLetterMeta(l, policy);
  const opts = {
    truncated: l.bodyTruncated || l.body.length < l.bodySize,
    contentType: l.contentType,
    contentEncoding: l.contentEncoding,
  };
  const shown = showPayload ? maskedPayloadView(l.body, opts, policy) : null;
  const total = meta.maskedCount + (shown?.maskedCount ?? 0);
  return {
    id: l.id,
    position: l.position,
    messageId: l.messageId,
    correlationId: l.correlationId,
    bodySize: l.bodySize,
    bodyTruncated: l.bodyTruncated,
    sha256: visibleSha256(l.sha256, policy),
    contentType: l.contentType,
    contentEncoding: l.contentEncoding,
    properties: meta.properties,
    headers: meta.headers,
    failure: meta.failure,
    history: meta.history,
    orderingKey: l.orderingKey,
    handled: l.handled ?? null,
    ...(l.readRaised ? { readRaised: l.readRaised } : {}),
    warnings: l.warnings ?? [],
    payload: shown?.view ?? null,
    masking: {
      payloadMasked: shown?.masked ?? false,
      maskedCount: total,
      sensitive: policy.sensitive,
      payloadMaskedCount: shown?.maskedCount ?? 0,
      byRule: total > 0 ? maskedByRule(l, showPayload ? l.body : null, opts, policy) : [],
    },
  };
}

export async function viewLetter(actor: Actor, meta: RequestMeta, input: ViewLetterInput): Promise<ViewLetterResult> {
  const scope = { action: "letter.view", connectionId: input.connectionId, queue: input.queue, target: input.letterId };
  await authorize(actor, "letter:read", { ...scope, meta });
  if (input.acceptRisk) await authorize(actor, "dlq:browse-risky", { ...scope, action: "dlq.read_risky", meta });
  const policy = await maskingPolicy(actor.role, input.connectionId, input.queue);
  // Every role may see a masked payload, except viewers on a sensitive DLQ.
  const showPayload = can(actor.role, "letter:view-payload") && policy.payload !== "none";
  const canReadPayload = showPayload && can(actor.role, "letter:read-payload");

  return audited<ViewLetterResult>(
    actor,
    meta,
    scope,
    async () => {
      // A read refused after waiting behind another console read names the job reading the DLQ.
      const adapter = adapterFor(input.connectionId);
      const dlq = await withTimeout(adapter.describeDlq(input.queue), READ_TIMEOUT_MS, "describeDlq").catch(
        rethrowBusy(input.connectionId, input.queue),
      );
      const base = {
        connection: connectionInfo(adapter),
        dlq,
        canReadPayload,
        canReveal: can(actor.role, "payload:reveal"),
        canConfirm: can(actor.role, "dlq:browse-risky"),
      };
      if (dlq.readRisk && !input.acceptRisk)
        return {
          ...base,
          letter: null,
          needsConfirmation: true,
          snapshot: await snapshotLetter(input, policy, showPayload),
        };
      // Behind a triage scan (it holds the queue to its end) the page says so at once, not after its wait.
      const l = await readInTurn(input.connectionId, input.queue, (turn) =>
        withTimeout(
          adapter.getLetter(input.queue, input.letterId, {
            // Roles that may not see a payload here never get its bytes, not even into this process.
            maxBodyBytes: showPayload ? VIEW_MAX_BODY_BYTES : 0,
            acceptRisk: input.acceptRisk,
            turn,
          }),
          READ_TIMEOUT_MS,
          "getLetter",
        ),
      );
      if (!l) return { ...base, letter: null, needsConfirmation: false };
      const letter = letterDetailOf(l, policy, showPayload);
      return { ...base, letter, needsConfirmation: false };
    },
    (r) => ({
      found: r.letter !== null || (r.snapshot ?? null) !== null,
      read: !r.needsConfirmation,
      ...(r.snapshot !== undefined ? { fromSnapshot: true } : {}),
      payloadShown: r.letter?.payload != null,
      masked: r.letter?.masking.maskedCount ?? 0,
      sensitive: policy.sensitive,
    }),
  );
}
