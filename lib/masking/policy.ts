import "server-only";
import type { Role } from "@/lib/auth/permissions";
import { isSensitiveDlq, rulesFor, sensitiveRules } from "./engine";
import { maskingHashKey } from "./key";
import { loadMaskingConfig } from "./store";
import type { MaskingRule } from "./types";

/** How one role sees one DLQ's letters. */
export interface MaskingPolicy {
  role: Role;
  /** The masking configuration version this policy comes from (stamps search text; see lib/triage/masked-search.ts). */
  version: number;
  sensitive: boolean;
  /** "none": no payload at all (viewers on a sensitive DLQ). */
  payload: "none" | "masked";
  /** The rules in force for this role here (already filtered by role). Empty: nothing is masked. */
  rules: MaskingRule[];
  hashKey: Buffer;
}

export function policyFrom(
  config: { rules: MaskingRule[]; sensitive: Array<{ connectionId: string; pattern: string }>; version?: number },
  role: Role,
  connectionId: string,
  queue: string,
  hashKey: Buffer,
): MaskingPolicy {
  const sensitive = isSensitiveDlq(config.sensitive, connectionId, queue);
  const version = config.version ?? 0;
  if (!sensitive) return { role, version, sensitive, payload: "masked", rules: rulesFor(config.rules, role), hashKey };
  return {
    role,
    version,
    sensitive,
    payload: role === "viewer" ? "none" : "masked",
    rules: sensitiveRules(config.rules, role),
    hashKey,
  };
}

export async function maskingPolicy(role: Role, connectionId: string, queue: string): Promise<MaskingPolicy> {
  return policyFrom(await loadMaskingConfig(), role, connectionId, queue, maskingHashKey());
}
