import "server-only";
import { authorize } from "@/lib/auth/authorize";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { audited } from "@/lib/use-case/audited";
import {
  checkMaskingConfig,
  listMaskingVersions,
  loadMaskingConfig,
  saveMaskingConfig,
  type MaskingConfig,
} from "./store";

/** The masking rules, sensitive DLQs and recent versions. Needs masking:manage. */
export async function viewMaskingConfig(actor: Actor, meta: RequestMeta) {
  await authorize(actor, "masking:manage", { action: "masking.view", meta });
  const [config, versions] = await Promise.all([loadMaskingConfig(), listMaskingVersions()]);
  return { config, versions };
}

/**
 * Stores a new version of the rules and sensitive DLQ patterns (validated). Needs masking:manage;
 * audited `masking.save` with the version, rule ids and patterns (rules hold no payload content).
 */
export async function saveMaskingRules(
  actor: Actor,
  meta: RequestMeta,
  input: { rules: unknown; sensitive: unknown; expectedVersion?: number },
): Promise<MaskingConfig> {
  const scope = { action: "masking.save" };
  await authorize(actor, "masking:manage", { ...scope, meta });
  return audited(
    actor,
    meta,
    scope,
    async () => saveMaskingConfig(checkMaskingConfig(input), actor.email, input.expectedVersion),
    (c) => ({
      version: c.version,
      rules: c.rules
        .map((r) => `${r.id}${r.enabled ? "" : " (off)"}`)
        .join(",")
        .slice(0, 1500),
      sensitive: c.sensitive
        .map((s) => `${s.connectionId}/${s.pattern}`)
        .join(",")
        .slice(0, 1500),
    }),
  );
}
