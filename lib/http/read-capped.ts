/**
 * A request body as UTF-8 text, or null when it is larger than `max` bytes (by its Content-Length,
 * or as it streams in: reading stops there and nothing more is held). For routes that take small
 * bodies from anyone (CSP reports) or from scripts (/api/v1), so a large body cannot fill memory.
 */
export async function readCapped(req: Request, max: number): Promise<string | null> {
  if (Number(req.headers.get("content-length") ?? 0) > max) return null;
  const reader = req.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
