import "server-only";
import { z } from "zod";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import type { FailureInfo, HeaderEntry } from "@/lib/brokers/contract/letter";
import { AppError } from "@/lib/errors";
import { audited } from "@/lib/use-case/audited";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";
import { buildPayloadView, type PayloadView } from "@/lib/letter/payload-view";
import { HEX_VIEW_BYTES } from "@/lib/letter/mask-letter";
import { VIEW_MAX_BODY_BYTES } from "./view-letter";

export const revealPayloadSchema = z.object({
  connectionId: z.string().min(1).max(200),
  queue: z.string().min(1).max(500),
  letterId: z.string().min(1).max(1000),
  reason: z
    .string()
    .trim()
    .min(10, "Give a reason of at least 10 characters.")
    .max(500, "Keep the reason under 500 characters."),
  acceptRisk: z.boolean().optional(),
});

export type RevealPayloadInput = z.input<typeof revealPayloadSchema>;

/** The unmasked parts of a letter, for one page view only. */
export interface RevealedLetter {
  payload: PayloadView;
  headers: HeaderEntry[];
  properties: HeaderEntry[];
  failure: Pick<FailureInfo, "exceptionMessage" | "stackTrace">;
}

/**
 * A letter's payload and headers without masking. Needs payload:reveal and a reason; audited
 * `payload.reveal` with the reason (never with payload content). The result is returned to the
 * caller only: nothing is cached or stored.
 */
export async function revealPayload(
  actor: Actor,
  meta: RequestMeta,
  input: RevealPayloadInput,
): Promise<RevealedLetter> {
  const scope = {
    action: "payload.reveal",
    connectionId: input.connectionId ?? null,
    queue: input.queue ?? null,
    target: input.letterId ?? null,
  };
  await authorize(actor, "payload:reveal", { ...scope, meta });
  const parsed = revealPayloadSchema.safeParse(input);
  if (!parsed.success) {
    throw new AppError("bad_request:reason", { userMessage: parsed.error.issues.map((i) => i.message).join(" ") });
  }
  const { connectionId, queue, letterId, reason, acceptRisk } = parsed.data;
  return audited(
    actor,
    meta,
    scope,
    async () => {
      const adapter = adapterFor(connectionId);
      const dlq = await withTimeout(adapter.describeDlq(queue), 30_000, "describeDlq");
      if (dlq.readRisk && !acceptRisk) {
        throw new AppError("confirmation_required:read", {
          userMessage:
            "Reading this DLQ costs letters, so the console does not read it again to reveal a letter. Move its letters to safety from the DLQ's page, then reveal the letter in the safe queue.",
        });
      }
      const l = await withTimeout(
        adapter.getLetter(queue, letterId, { maxBodyBytes: VIEW_MAX_BODY_BYTES, acceptRisk }),
        30_000,
        "getLetter",
      );
      if (!l) throw new AppError("not_found:letter", { userMessage: "This letter is no longer in the DLQ." });
      return {
        payload: buildPayloadView(l.body, {
          truncated: l.bodyTruncated || l.body.length < l.bodySize,
          contentType: l.contentType,
          maxHexBytes: HEX_VIEW_BYTES,
        }),
        headers: l.headers,
        properties: l.properties,
        failure: { exceptionMessage: l.failure.exceptionMessage, stackTrace: l.failure.stackTrace },
        sha256: l.sha256,
      };
    },
    (r) => ({ reason, sha256: (r as RevealedLetter & { sha256: string }).sha256 }),
  ).then(({ sha256: _s, ...rest }) => rest);
}
