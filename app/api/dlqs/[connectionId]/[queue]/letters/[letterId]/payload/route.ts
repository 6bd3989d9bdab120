import { downloadPayload } from "@/lib/dlq/download-payload";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** The payload as an attachment that a browser never renders: original bytes, or a masked rendition (X-Payload-Masked). */
export const GET = sessionRoute<{ connectionId: string; queue: string; letterId: string }>(
  async ({ actor, meta, params }) => {
    const p = await downloadPayload(actor, meta, params);
    return new Response(new Uint8Array(p.bytes), {
      headers: {
        "Content-Type": "application/octet-stream",
        "Content-Disposition": `attachment; filename="${p.filename}"`,
        "Content-Length": String(p.bytes.byteLength),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "no-store",
        "X-Payload-SHA256": p.digest,
        ...(p.maskedCount !== null ? { "X-Payload-Masked": String(p.maskedCount) } : {}),
      },
    });
  },
);
