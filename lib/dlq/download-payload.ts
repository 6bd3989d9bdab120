import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { audited } from "./audit-trail";
import { adapterFor, withTimeout } from "./connection";

export interface DownloadPayloadInput {
  connectionId: string;
  queue: string;
  letterId: string;
  acceptRisk?: boolean;
}

export interface PayloadDownload {
  bytes: Uint8Array;
  sha256: string;
  size: number;
  contentType: string | null;
  filename: string;
}

/** The original payload bytes, exactly as read. Needs letter:read-payload; audited `letter.payload_download`. */
export async function downloadPayload(actor: Actor, meta: RequestMeta, input: DownloadPayloadInput): Promise<PayloadDownload> {
  const scope = { action: "letter.payload_download", connectionId: input.connectionId, queue: input.queue, target: input.letterId };
  await authorize(actor, "letter:read-payload", { ...scope, meta });
  if (input.acceptRisk) await authorize(actor, "dlq:browse-risky", { ...scope, action: "dlq.read_risky", meta });
  return audited(
    actor,
    meta,
    scope,
    async () => {
      const adapter = adapterFor(input.connectionId);
      const dlq = await withTimeout(adapter.describeDlq(input.queue), 30_000, "describeDlq");
      if (dlq.readRisk && !input.acceptRisk) {
        throw new AppError("confirmation_required:read", {
          userMessage: "Reading this DLQ can cost letters. Confirm the risky read on the DLQ page first, then download again.",
        });
      }
      const l = await withTimeout(adapter.getLetter(input.queue, input.letterId, { acceptRisk: input.acceptRisk }), 60_000, "getLetter");
      if (!l) {
        throw new AppError("not_found:letter", {
          userMessage: "This letter is no longer in the DLQ: it was redriven, discarded or expired since the list was read.",
        });
      }
      const safeId = input.letterId.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80) || "letter";
      return { bytes: l.body, sha256: l.sha256, size: l.bodySize, contentType: l.contentType, filename: `${safeId}.bin` };
    },
    (r) => ({ size: r.size, sha256: r.sha256 }),
  );
}
