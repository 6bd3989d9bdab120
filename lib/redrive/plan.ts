import { z } from "zod";
import { payloadPatchSchema } from "@/lib/repair/patch";
import { dlqSchema, selectionSchema } from "@/lib/selection/selection";

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
  /** Repair each letter on its way (letter:repair, the config switch, an adapter with `repair`). */
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
