import { auditActionLabel } from "@/lib/audit/actions";

/**
 * What an audit entry is about, for the audit page's first filter:
 * - operations: acts that change letters, queues or jobs (redrive, discard, repair, restore, skip,
 *   scans, a read that costs letters, an acknowledged finding, a failed job);
 * - administration: acts that change how the console works or who may use it (users, roles,
 *   masking and triage rules, owners, alert rules, API tokens, the chain's verification);
 * - access: who looked at what and who came in: sign-ins and their failures, DLQ and letter views,
 *   payload views, downloads and reveals, lists, searches, previews that change nothing, exports.
 * An on-call engineer reads operations and administration first; the far more numerous access
 * entries (every letter view) are one click away, as a security reviewer reads them.
 */
export type AuditCategory = "operations" | "administration" | "access";
export const AUDIT_CATEGORIES: readonly AuditCategory[] = ["operations", "administration", "access"];
export const DEFAULT_AUDIT_CATEGORIES: readonly AuditCategory[] = ["operations", "administration"];

export const AUDIT_CATEGORY_LABELS: Record<AuditCategory, string> = {
  operations: "Operations",
  administration: "Administration",
  access: "Access",
};

/** Actions whose category the rules below would not guess. */
const EXPLICIT: Record<string, AuditCategory> = {
  "user.provisioned": "administration",
  "audit.verify": "administration",
  "masking.save": "administration",
  "triage.rules_save": "administration",
  "owner.save": "administration",
  "owner.delete": "administration",
  "token.create": "administration",
  "token.revoke": "administration",
  "token.refused": "access",
  "payload.reveal": "access",
  "letter.payload_download": "access",
  "dlq.read_risky_confirmed": "operations",
  "dlq.read_risky": "operations",
  "dlq.read_loss": "operations",
  "alert.test_send": "operations",
};

/** Areas whose every action administers the console. */
const ADMIN_AREAS = new Set(["user"]);
/** Verbs (the part after the area's dot, or its last word) that only read or preview. */
const READ_VERB =
  /(^|_)(view|views|list|list_all|open|describe|export|search|reference|overview|dlq|findings|metrics|groups|letters|ledger|plan|preview|repair_plan)$/;

/** The category of an action; an action not known to the rules counts as an operation, never hidden by default. */
export function auditCategoryOf(action: string): AuditCategory {
  const explicit = EXPLICIT[action];
  if (explicit) return explicit;
  const dot = action.indexOf(".");
  const area = dot < 0 ? action : action.slice(0, dot);
  const verb = dot < 0 ? "" : action.slice(dot + 1);
  if (area === "auth") return "access";
  if (ADMIN_AREAS.has(area) && !READ_VERB.test(verb)) return "administration";
  if (area === "alert" && verb.startsWith("rule_")) return "administration";
  if (READ_VERB.test(verb)) return "access";
  return "operations";
}

/** The categories in a URL value ("operations,administration", "all"); none given: the default. */
export function parseAuditCategories(value: string | undefined): AuditCategory[] | "all" {
  const v = (value ?? "").trim();
  if (!v) return [...DEFAULT_AUDIT_CATEGORIES];
  if (v === "all") return "all";
  const picked = AUDIT_CATEGORIES.filter((c) => v.split(",").includes(c));
  return picked.length ? picked : [...DEFAULT_AUDIT_CATEGORIES];
}

export interface AuditActionChoice {
  action: string;
  label: string;
}

/** Actions grouped by category, each group sorted by its label, for the action list. */
export function groupAuditActions(
  actions: Iterable<string>,
): Array<{ category: AuditCategory; actions: AuditActionChoice[] }> {
  const groups = new Map<AuditCategory, AuditActionChoice[]>(AUDIT_CATEGORIES.map((c) => [c, []]));
  for (const action of new Set(actions))
    groups.get(auditCategoryOf(action))!.push({ action, label: auditActionLabel(action) });
  return AUDIT_CATEGORIES.map((category) => ({
    category,
    actions: groups.get(category)!.sort((a, b) => a.label.localeCompare(b.label)),
  })).filter((g) => g.actions.length > 0);
}
