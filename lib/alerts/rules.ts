import { z } from "zod";
import { checkGlob } from "@/lib/glob";

/**
 * Alert rules: what fires, for which DLQs, and where the message goes. Pure (no server-only
 * imports), so the rule form shares the schema and the wording with the server.
 */
export const ALERT_KINDS = [
  "depth_above",
  "inflow_within",
  "oldest_above",
  "deadline_within",
  "finding_at_least",
  "group_new",
  "group_regressed",
  "group_grew",
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** Kinds that watch failure groups (one message per group and change) rather than a DLQ's figures. */
export const GROUP_KINDS = ["group_new", "group_regressed", "group_grew"] as const satisfies readonly AlertKind[];
export type GroupAlertKind = (typeof GROUP_KINDS)[number];

export function isGroupKind(kind: string): kind is GroupAlertKind {
  return (GROUP_KINDS as readonly string[]).includes(kind);
}

export const FINDING_SEVERITIES = ["info", "warning", "critical"] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/** info < warning < critical; an unknown word ranks below everything. */
export function severityRank(severity: string): number {
  return (FINDING_SEVERITIES as readonly string[]).indexOf(severity);
}

const YEAR_MINUTES = 366 * 24 * 60;
const minutes = (max: number) =>
  z.coerce
    .number("Enter a number of minutes")
    .int("Enter whole minutes")
    .min(1, "At least 1 minute")
    .max(max, `At most ${max} minutes`);

export const paramsSchemas = {
  depth_above: z.object({
    depth: z.coerce
      .number("Enter a depth")
      .int("Enter a whole number")
      .min(0, "The depth cannot be negative")
      .max(1_000_000_000),
  }),
  // Read from the 60 s samples (lib/alerts/evaluate.ts): a day is the longest window they are meant to cover.
  inflow_within: z.object({ minutes: minutes(24 * 60) }),
  oldest_above: z.object({ minutes: minutes(YEAR_MINUTES) }),
  deadline_within: z.object({ minutes: minutes(YEAR_MINUTES) }),
  finding_at_least: z.object({ severity: z.enum(FINDING_SEVERITIES, "Choose a severity") }),
  group_new: z.object({}),
  group_regressed: z.object({}),
  // Counted over the triage index's letters by arrival (lib/alerts/group-evaluate.ts): a day at most, like inflow.
  group_grew: z.object({
    letters: z.coerce
      .number("Enter a number of letters")
      .int("Enter a whole number of letters")
      .min(1, "At least 1 letter")
      .max(1_000_000, "At most 1,000,000 letters"),
    minutes: minutes(24 * 60),
  }),
} as const satisfies Record<AlertKind, z.ZodType>;

export type AlertParams = { [K in AlertKind]: z.infer<(typeof paramsSchemas)[K]> };

/** A kind with its checked values. */
export type AlertCondition = { [K in AlertKind]: { kind: K; params: AlertParams[K] } }[AlertKind];
/** A condition on a failure group (lib/alerts/group-evaluate.ts). */
export type GroupCondition = Extract<AlertCondition, { kind: GroupAlertKind }>;
/** A condition on a DLQ's figures (lib/alerts/match.ts judges them). */
export type DlqCondition = Exclude<AlertCondition, GroupCondition>;

const optionalText = (max: number, label: string, glob = false) =>
  z
    .string()
    .trim()
    .max(max, `${label}: at most ${max} characters`)
    .superRefine(glob ? checkGlob(label) : () => undefined)
    .nullish()
    .transform((v) => (v ? v : null));

/** What an admin sends to create a rule. The webhook URL is checked again by lib/alerts/target.ts (network rules). */
export const ruleInputSchema = z.object({
  name: z.string("Name the rule").trim().min(1, "Name the rule").max(100, "The name has at most 100 characters"),
  kind: z.enum(ALERT_KINDS, "Choose what the rule watches"),
  params: z.record(z.string(), z.unknown(), "Give the rule's threshold"),
  connectionId: optionalText(63, "Connection"),
  queuePattern: optionalText(200, "DLQ name pattern", true),
  ownerTeam: optionalText(100, "Owning team"),
  webhookUrl: z
    .string("Give a webhook URL")
    .trim()
    .min(1, "Give a webhook URL")
    .max(2000, "The webhook URL has at most 2000 characters"),
  enabled: z.boolean().default(true),
});

/** A change: the same fields, with the webhook URL optional (absent or empty: keep the saved one, which the browser never sees). */
export const ruleUpdateSchema = ruleInputSchema.extend({
  id: z.uuid("Unknown rule"),
  webhookUrl: z
    .string()
    .trim()
    .max(2000, "The webhook URL has at most 2000 characters")
    .nullish()
    .transform((v) => (v ? v : null)),
});

export type RuleInput = z.input<typeof ruleInputSchema>;
export type RuleUpdateInput = z.input<typeof ruleUpdateSchema>;

/** Checks a kind's values; `null` with the reason when they do not fit the kind. */
export function parseCondition(
  kind: string,
  params: unknown,
): { ok: true; condition: AlertCondition } | { ok: false; message: string } {
  if (!(ALERT_KINDS as readonly string[]).includes(kind)) return { ok: false, message: "Choose what the rule watches" };
  const r = paramsSchemas[kind as AlertKind].safeParse(params);
  if (!r.success) return { ok: false, message: r.error.issues.map((i) => i.message).join("; ") };
  return { ok: true, condition: { kind, params: r.data } as AlertCondition };
}

/** "2 h 5 min", "45 min", "3 d 4 h": coarse, for messages and labels. */
export function formatMinutes(total: number): string {
  const m = Math.max(0, Math.round(total));
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** The rule's condition in words: "depth above 100", "any inflow in the last 15 min". */
export function describeCondition(c: AlertCondition): string {
  switch (c.kind) {
    case "depth_above":
      return `depth above ${c.params.depth}`;
    case "inflow_within":
      return `any inflow in the last ${formatMinutes(c.params.minutes)}`;
    case "oldest_above":
      return `oldest letter older than ${formatMinutes(c.params.minutes)}`;
    case "deadline_within":
      return `oldest letter lost to retention within ${formatMinutes(c.params.minutes)}`;
    case "finding_at_least":
      return c.params.severity === "critical"
        ? "an open critical finding"
        : `an open finding of severity ${c.params.severity} or worse`;
    case "group_new":
      return "a new failure group";
    case "group_regressed":
      return "a resolved failure group regressed";
    case "group_grew":
      return `a failure group grew by ${c.params.letters} letter${c.params.letters === 1 ? "" : "s"} or more within ${formatMinutes(c.params.minutes)}`;
  }
}

/** Which DLQs: "connection prod-rabbit, DLQs orders.*, team payments", or "every DLQ". */
export function describeScope(s: {
  connectionId: string | null;
  queuePattern: string | null;
  ownerTeam: string | null;
}): string {
  const parts = [
    s.connectionId ? `connection ${s.connectionId}` : null,
    s.queuePattern ? `DLQs ${s.queuePattern}` : null,
    s.ownerTeam ? `owned by ${s.ownerTeam}` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "every DLQ";
}

export const KIND_LABELS: Record<AlertKind, { label: string; unit: string }> = {
  depth_above: { label: "Depth above", unit: "letters" },
  inflow_within: { label: "Any inflow in the last", unit: "minutes" },
  oldest_above: { label: "Oldest letter older than", unit: "minutes" },
  deadline_within: { label: "Retention deadline within", unit: "minutes" },
  finding_at_least: { label: "Open finding at least", unit: "severity" },
  group_new: { label: "A new failure group appears", unit: "" },
  group_regressed: { label: "A resolved failure group regresses", unit: "" },
  group_grew: { label: "A failure group grows by", unit: "letters" },
};
