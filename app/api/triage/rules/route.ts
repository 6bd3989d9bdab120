import { listRules, saveRules } from "@/lib/triage/use-cases";
import { jsonBody, sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** The classification rules in force: { rules, version, updatedBy, updatedAt }. */
export const GET = sessionRoute(({ actor, meta }) => listRules(actor, meta));

/** Replaces the rules (admin): { rules, expectedVersion? }. */
export const POST = sessionRoute(async ({ req, actor, meta }) => {
  const b = await jsonBody(req).catch(() => ({}) as Record<string, unknown>);
  return saveRules(actor, meta, {
    rules: b.rules,
    expectedVersion: typeof b.expectedVersion === "number" ? b.expectedVersion : undefined,
  });
});
