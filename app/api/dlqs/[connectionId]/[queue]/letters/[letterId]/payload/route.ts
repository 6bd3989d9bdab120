import { requireActor, requestMeta } from "@/lib/auth/session";
import { downloadPayload } from "@/lib/dlq/download-payload";
import { errorResponse } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** The payload as an attachment that a browser never renders: original bytes, or a masked rendition (X-Payload-Masked). */
export async function GET(
  _req: Request,
  ctx: { params: Promise<{ connectionId: string; queue: string; letterId: string }> },
) {
  try {
    const { connectionId, queue, letterId } = await ctx.params;
    const actor = await requireActor();
    const p = await downloadPayload(actor, await requestMeta(), { connectionId, queue, letterId });
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
  } catch (e) {
    return errorResponse(e);
  }
}
