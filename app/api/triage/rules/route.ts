import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { jsonBody, ok, requireSameOrigin } from "@/lib/triage/http";
import { listRules, saveRules } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** The classification rules in force: { rules, version, updatedBy, updatedAt }. */
export async function GET() {
  try {
    const actor = await requireActor();
    return ok(await listRules(actor, await requestMeta()));
  } catch (e) {
    return errorResponse(e);
  }
}

/** Replaces the rules (admin): { rules, expectedVersion? }. */
export async function POST(req: Request) {
  try {
    requireSameOrigin(req);
    const actor = await requireActor();
    const b = await jsonBody(req).catch(() => ({}) as Record<string, unknown>);
    return ok(
      await saveRules(actor, await requestMeta(), {
        rules: b.rules,
        expectedVersion: typeof b.expectedVersion === "number" ? b.expectedVersion : undefined,
      }),
    );
  } catch (e) {
    return errorResponse(e);
  }
}
