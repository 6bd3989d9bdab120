import { z } from "zod";
import { AppError } from "@/lib/errors";
import { payloadPatchSchema } from "@/lib/repair/patch";
import type { LetterFilter } from "@/lib/triage/queries";

/**
 * A redrive's plan: what the operator chose, validated at the use-case boundary. Defaults: a
 * sample of 5, watched for 2 minutes, count limit 3, breaker at 10 %.
 */
export const DEFAULTS = {
  sample: { count: 5 },
  watchSeconds: 120,
  rate: 50,
  redriveLimit: 3,
  breakerThreshold: 0.1,
  breakerWindow: 200,
  breakerMinLetters: 20,
} as const;

const dateText = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 date and time");

/** The triage filter minus the DLQ (which the plan names once). */
export const filterSchema = z
  .object({
    groupKey: z.string().min(1).max(500).optional(),
    exceptionClass: z.string().min(1).max(500).optional(),
    reason: z.string().min(1).max(200).optional(),
    origin: z.string().min(1).max(1000).optional(),
    from: dateText.optional(),
    to: dateText.optional(),
    header: z.object({ name: z.string().min(1).max(200), value: z.string().max(512) }).optional(),
    text: z.string().max(500).optional(),
  })
  .strict();

export const selectionSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("filter"), filter: filterSchema }),
  z.object({ kind: z.literal("group"), groupKey: z.string().min(1).max(500) }),
  z.object({ kind: z.literal("letters"), letterIds: z.array(z.string().min(1).max(1000)).min(1).max(10_000) }),
]);
export type Selection = z.infer<typeof selectionSchema>;

export const targetSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("origin") }),
  z.object({ kind: z.literal("queue"), name: z.string().min(1).max(1000) }),
]);

export const parkingSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("queue"), name: z.string().min(1).max(1000) }),
  z.object({ kind: z.literal("mark") }),
]);
export type Parking = z.infer<typeof parkingSchema>;

export const sampleSchema = z.union([
  z.object({ count: z.number().int().min(1).max(10_000) }),
  z.object({ percent: z.number().gt(0).max(100) }),
]);

export const dlqSchema = z.object({ connectionId: z.string().min(1).max(200), queue: z.string().min(1).max(1000) });

/** A redrive that repairs: the patch applied to each letter it moves, and why (recorded with every letter). */
export const redriveRepairSchema = z.object({
  patch: payloadPatchSchema,
  reason: z
    .string()
    .trim()
    .min(3, "Give a reason of at least 3 characters.")
    .max(2000, "Keep the reason under 2000 characters."),
});
export type RedriveRepair = z.output<typeof redriveRepairSchema>;

/** `parking` is optional here: the preview checks a named parking queue's protection when it is given. */
export const previewSchema = dlqSchema.extend({
  selection: selectionSchema,
  target: targetSchema.default({ kind: "origin" }),
  parking: parkingSchema.optional(),
  /** Repair each letter on its way (letter:repair, the config switch, an adapter with capabilities.repair). */
  repair: redriveRepairSchema.optional(),
});

export const planSchema = previewSchema.extend({
  fix: z.string().trim().min(3, "State which fix this redrive follows.").max(2000),
  confirmedCount: z.number().int().min(1),
  sample: sampleSchema.default(DEFAULTS.sample),
  watchSeconds: z.number().int().min(1).max(3600).default(DEFAULTS.watchSeconds),
  rate: z.number().gt(0).max(10_000).default(DEFAULTS.rate),
  redriveLimit: z.number().int().min(1).max(100).default(DEFAULTS.redriveLimit),
  parking: parkingSchema.default({ kind: "mark" }),
  breakerThreshold: z.number().gt(0).max(1).default(DEFAULTS.breakerThreshold),
  breakerWindow: z.number().int().min(1).max(100_000).default(DEFAULTS.breakerWindow),
  breakerMinLetters: z.number().int().min(1).max(100_000).default(DEFAULTS.breakerMinLetters),
  acceptRisk: z.boolean().default(false),
  /** An admin confirms sending letters where payloads are less protected than in the DLQ (target-protection.ts). */
  confirmLessProtected: z.boolean().default(false),
});
export type PlanInput = z.input<typeof planSchema>;
export type Plan = z.output<typeof planSchema>;

/** Letters in the sample for a set of `total`. */
export function sampleCount(sample: Plan["sample"], total: number): number {
  const k = "count" in sample ? sample.count : Math.ceil((total * sample.percent) / 100);
  return Math.max(1, Math.min(total, k));
}

/**
 * A letter's state in a redrive's ledger. `interrupted`: an attempt started on it (state moving,
 * replay id assigned) and its outcome was never recorded (the process died, or the broker went
 * away mid-move); it is asked for again like `pending`. `unconfirmed`: asked for again after such
 * an attempt and not in the DLQ: most likely moved by it; confirmed as moved before the job ends
 * when it is still not in the DLQ then (see ledger.ts, "Interrupted attempts").
 */
export type LedgerState =
  | "pending"
  | "moving"
  | "interrupted"
  | "unconfirmed"
  | "moved"
  | "failed"
  | "missing"
  | "checksum_mismatch"
  | "parked"
  | "skipped"
  | "returned";
export const LEDGER_STATES: readonly LedgerState[] = [
  "pending",
  "moving",
  "interrupted",
  "unconfirmed",
  "moved",
  "failed",
  "missing",
  "checksum_mismatch",
  "parked",
  "skipped",
  "returned",
];
export type Stage = "sample" | "watching" | "awaiting_bulk" | "bulk" | "done";

/** The index filter (and hand-picked ids) a selection stands for, in one DLQ. Shared by redrive and discard. */
export function filterOfSelection(
  input: { connectionId: string; queue: string },
  s: Selection,
): { filter: LetterFilter; letterIds?: string[] } {
  // Only the DLQ: the input's own `reason` (why to discard) is not the letters' failure reason.
  const dlq = { connectionId: input.connectionId, queue: input.queue };
  if (s.kind === "group") return { filter: { ...dlq, groupKey: s.groupKey } };
  if (s.kind === "letters") return { filter: { ...dlq }, letterIds: [...new Set(s.letterIds)] };
  const f = s.filter;
  return {
    filter: { ...dlq, ...f, from: f.from ? new Date(f.from) : undefined, to: f.to ? new Date(f.to) : undefined },
  };
}

/** A selection in the operator's words, for audit rows and confirmations. */
export function describeSelection(s: Selection): string {
  if (s.kind === "group") return `group ${s.groupKey}`;
  if (s.kind === "letters") return `${s.letterIds.length} chosen letter${s.letterIds.length === 1 ? "" : "s"}`;
  const parts = Object.entries(s.filter).map(
    ([k, v]) =>
      `${k} ${typeof v === "object" ? `${(v as { name: string }).name}=${(v as { value: string }).value}` : v}`,
  );
  return parts.length ? `letters where ${parts.join(", ")}` : "every letter in the DLQ";
}

/**
 * Refuses to go on when the set no longer holds the count the operator confirmed (`conflict:count`,
 * which the forms answer by offering to count again). `review` names what they review: the form's
 * count or the redrive's preview. Shared by redrive and discard.
 */
export function assertConfirmedCount(n: number, confirmed: number, review: "count" | "preview"): void {
  if (n === confirmed) return;
  throw new AppError("conflict:count", {
    userMessage: `The selection now holds ${n} letter${n === 1 ? "" : "s"}, not the ${confirmed} you confirmed. Review the ${review} and confirm again.`,
    details: { count: n },
  });
}
