import { operationRoute } from "@/lib/api/route";
import { getDlqLetterOperation, toLetter } from "@/lib/api/v1";
import { viewLetter } from "@/lib/dlq/view-letter";

export const dynamic = "force-dynamic";

/**
 * One letter (lib/api/v1/letters.ts) as its page shows it: viewLetter authorizes, decides whether
 * the role sees the payload, masks headers, failure text and payload, and audits the view. A letter
 * of a DLQ whose reads cost letters comes from the snapshot only, never from the broker.
 */
export const GET = operationRoute(
  getDlqLetterOperation,
  { permission: "letter:read", action: "letter.view" },
  async ({ actor, meta, params }) =>
    toLetter(
      await viewLetter(actor, meta, {
        // Decoded once by Next already (route handlers, unlike pages): never again.
        connectionId: params.connectionId,
        queue: params.queue,
        letterId: params.letterId,
      }),
    ),
);
