import { operationRoute } from "@/lib/api/route";
import { planRedriveOperation } from "@/lib/api/v1";
import { planRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** The count, scope and target a redrive would have (lib/api/v1/redrives.ts); planRedrive authorizes again and audits `redrive.plan`. */
export const POST = operationRoute(
  planRedriveOperation,
  { permission: "redrive:sample", action: "redrive.plan" },
  async ({ actor, meta, body }) => planRedrive(actor, meta, body),
);
