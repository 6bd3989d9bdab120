import { openApiDocument } from "@/lib/api/registry";
import "@/lib/api/v1";

export const dynamic = "force-dynamic";

/** The OpenAPI 3.1 document of /api/v1, generated from the routes' zod schemas. Public: it holds no data or secrets. */
export async function GET(): Promise<Response> {
  return new Response(JSON.stringify(openApiDocument({ version: "1" })), {
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });
}
