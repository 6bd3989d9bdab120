import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { AppError } from "@/lib/errors";
import { audited } from "@/lib/use-case/audited";
import { maskPayloadWithRules } from "@/lib/masking/engine";
import { maskBinary } from "@/lib/masking/binary";
import { decodeUtf8, looksLikeText } from "@/lib/text";
import { maskingPolicy } from "@/lib/masking/policy";
import { adapterFor, withTimeout } from "@/lib/use-case/connection";
import { visibleSha256 } from "@/lib/masking/digest";

export interface DownloadPayloadInput {
  connectionId: string;
  queue: string;
  letterId: string;
  acceptRisk?: boolean;
}

export interface PayloadDownload {
  bytes: Uint8Array;
  /** The original payload's SHA-256 (audited); `digest` is what the downloader is shown. */
  sha256: string;
  /** The SHA-256 for original bytes; the keyed digest for a masked copy (lib/masking/digest.ts). */
  digest: string;
  size: number;
  contentType: string | null;
  filename: string;
  /** Values masked in `bytes`; null when `bytes` are the original payload. */
  maskedCount: number | null;
}

/** Bounds for masking a whole payload for download (the page view is cut much sooner). */
const DOWNLOAD_MASK_LIMITS = { maxChars: 64 * 1024 * 1024, maxNodes: 5_000_000, maxDepth: 64 };

/**
 * The payload for download. Needs letter:read-payload; audited `letter.payload_download`. The
 * original bytes only when no masking rule applies to the role on this DLQ; otherwise a masked
 * rendition (UTF-8 text, `<id>.masked.json|txt`), and `forbidden:masked` when the payload cannot be
 * masked (binary, or JSON past the bounds). Admins get the original through reveal only.
 */
export async function downloadPayload(
  actor: Actor,
  meta: RequestMeta,
  input: DownloadPayloadInput,
): Promise<PayloadDownload> {
  const scope = {
    action: "letter.payload_download",
    connectionId: input.connectionId,
    queue: input.queue,
    target: input.letterId,
  };
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
          userMessage:
            "Reading this DLQ costs letters, so the console does not read it again for a download. Move its letters to safety from the DLQ's page, then download from the safe queue.",
        });
      }
      const l = await withTimeout(
        adapter.getLetter(input.queue, input.letterId, { acceptRisk: input.acceptRisk }),
        60_000,
        "getLetter",
      );
      if (!l) {
        throw new AppError("not_found:letter", {
          userMessage:
            "This letter is no longer in the DLQ: it was redriven, discarded or expired since the list was read.",
        });
      }
      const safeId = input.letterId.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80) || "letter";
      const policy = await maskingPolicy(actor.role, input.connectionId, input.queue);
      const text = policy.rules.length > 0 ? decodeUtf8(l.body) : null;
      if (policy.rules.length > 0 && (text === null || !looksLikeText(text))) {
        // Binary: masked byte-wise as the page's hex view is; nothing masked means the original bytes.
        const b = maskBinary(l.body, policy.rules, policy.hashKey, { contentEncoding: l.contentEncoding });
        if (b.kind === "hidden")
          throw new AppError("forbidden:masked", { userMessage: `${b.reason} An admin can reveal it with a reason.` });
        const masked = b.maskedCount > 0;
        return {
          bytes: masked ? b.bytes : l.body,
          sha256: l.sha256,
          digest: masked ? visibleSha256(l.sha256, policy) : l.sha256,
          size: l.bodySize,
          contentType: l.contentType,
          filename: `${safeId}${masked ? ".masked" : ""}.bin`,
          maskedCount: masked ? b.maskedCount : null,
        };
      }
      const m = maskPayloadWithRules(l.body, l.contentType, policy.rules, policy.hashKey, DOWNLOAD_MASK_LIMITS);
      if (m.kind === "original") {
        return {
          bytes: l.body,
          sha256: l.sha256,
          digest: l.sha256,
          size: l.bodySize,
          contentType: l.contentType,
          filename: `${safeId}.bin`,
          maskedCount: null,
        };
      }
      if (m.kind === "hidden") {
        throw new AppError("forbidden:masked", {
          userMessage:
            "Masking rules apply to your role and this payload cannot be masked (binary or too large), so it cannot be downloaded. An admin can reveal it with a reason.",
        });
      }
      const bytes = new TextEncoder().encode(m.text ?? "");
      const ext = m.kind === "json" ? "json" : "txt";
      return {
        bytes,
        sha256: l.sha256,
        digest: visibleSha256(l.sha256, policy),
        size: l.bodySize,
        contentType: m.kind === "json" ? "application/json" : "text/plain",
        filename: `${safeId}.masked.${ext}`,
        maskedCount: m.maskedCount,
      };
    },
    (r) => ({ size: r.size, sha256: r.sha256, masked: r.maskedCount !== null, maskedCount: r.maskedCount }),
  );
}
