import "server-only";
import { ROLES, type Role } from "@/lib/auth/permissions";
import { AppError } from "@/lib/errors";
import { MASKING_ENGINE_REVISION, maskHeaderRecord, textMaskerFor } from "@/lib/masking/engine";
import { policyFrom, type MaskingPolicy } from "@/lib/masking/policy";
import type { MaskingRule, SensitiveDlq } from "@/lib/masking/types";

/**
 * Search that cannot be used as an oracle for masked text.
 *
 * A filter answers with counts and rows; if it matched the raw exception message, a role that sees
 * `password=[hidden]` could still find the password one character at a time by watching the count.
 * So a role under masking rules searches the message as it sees it: the scan stores, per role
 * whose rules change a message, that role's masked text (`exception_search`), stamped with the
 * masking configuration version (`search_version`). A row stamped with another version is not
 * matched by message text at all until a rescan recomputes it: a changed rule never searches text
 * masked under the old rules.
 */

/**
 * The stamp of stored search text: the masking configuration's version and the engine's revision
 * (a new engine masks the same rules differently), so text masked either way before is never searched.
 */
export function searchStamp(configVersion: number): number {
  return configVersion * 1000 + MASKING_ENGINE_REVISION;
}

/** What the scan needs to compute a row's search text: each role's rules on this DLQ. */
export interface SearchMasking {
  version: number;
  /** Roles with rules in force here; roles without any see (and search) the raw message. */
  roles: Array<{ role: Role; rules: MaskingRule[] }>;
  hashKey: Uint8Array | string;
}

export function searchMaskingFor(
  config: { rules: MaskingRule[]; sensitive: SensitiveDlq[]; version: number },
  connectionId: string,
  queue: string,
  hashKey: Buffer,
): SearchMasking {
  const roles = ROLES.map((role) => ({
    role,
    rules: policyFrom(config, role, connectionId, queue, hashKey).rules,
  })).filter((r) => r.rules.length > 0);
  return { version: searchStamp(config.version), roles, hashKey };
}

/**
 * Each role's masker, one per distinct rule list (the default rules apply to every role, so the
 * roles share one), compiled once per SearchMasking: a scan masks every letter's message with it.
 */
interface SearchPlan {
  roles: SearchMasking["roles"];
  hashKey: SearchMasking["hashKey"];
  /** Per entry of `roles`, in order: the index of its masker. */
  maskerOf: number[];
  maskers: Array<(text: string) => { text: string }>;
}
const plans = new WeakMap<SearchMasking, SearchPlan>();

function planOf(m: SearchMasking): SearchPlan {
  const known = plans.get(m);
  if (known && known.roles === m.roles && known.hashKey === m.hashKey) return known;
  const bySig = new Map<string, number>();
  const plan: SearchPlan = { roles: m.roles, hashKey: m.hashKey, maskerOf: [], maskers: [] };
  for (const { rules } of m.roles) {
    const sig = rules.map((r) => r.id).join("\u0000");
    let i = bySig.get(sig);
    if (i === undefined) {
      i = plan.maskers.push(textMaskerFor(rules, m.hashKey)) - 1;
      bySig.set(sig, i);
    }
    plan.maskerOf.push(i);
  }
  plans.set(m, plan);
  return plan;
}

/**
 * { role: masked message } for the roles whose rules change this message, or null when none does.
 * Roles with the same rules share one masking pass (the default rules apply to every role).
 */
export function maskedSearchText(message: string | null, m: SearchMasking): Record<string, string> | null {
  if (!message || m.roles.length === 0) return null;
  const plan = planOf(m);
  let out: Record<string, string> | null = null;
  const done: Array<string | undefined> = [];
  for (let k = 0; k < m.roles.length; k++) {
    const i = plan.maskerOf[k];
    let masked = done[i];
    if (masked === undefined) {
      masked = plan.maskers[i](message).text;
      done[i] = masked;
    }
    if (masked !== message) {
      out ??= {};
      out[m.roles[k].role] = masked;
    }
  }
  return out;
}

/**
 * How one role's filters are evaluated: `raw` for a role no rule masks (it sees what is stored),
 * else against what the role sees. Derived from the role's masking policy on the DLQ.
 */
export type SearchScope = { kind: "raw" } | { kind: "masked"; role: Role; version: number };

export function searchScopeOf(policy: MaskingPolicy): SearchScope {
  return policy.rules.length === 0
    ? { kind: "raw" }
    : { kind: "masked", role: policy.role, version: searchStamp(policy.version) };
}

/**
 * A client's filter made safe to evaluate for this role: `search` set from its policy, and a
 * header filter refused when the value it names would be masked for the role. Matching is exact,
 * so a value that masking leaves as it is can only match letters that show that very value; a
 * value masking would change (a secret header, a card number, an address) is refused, whatever
 * the letters hold, so the answer never depends on a masked value.
 */
export function scopedFilter<F extends { header?: { name: string; value: string }; search?: SearchScope }>(
  filter: F,
  policy: MaskingPolicy,
): F {
  if (filter.header && policy.rules.length > 0) {
    const { name, value } = filter.header;
    const seen = maskHeaderRecord({ [name]: value }, policy.rules, policy.hashKey).headers[name];
    if (seen !== value) {
      throw new AppError("forbidden:filter", {
        userMessage: `Masking rules hide values like this one of the header "${name.slice(0, 100)}" from your role, so letters cannot be filtered on it. Filter by another field, or ask an admin.`,
      });
    }
  }
  return { ...filter, search: searchScopeOf(policy) };
}
