import { z } from "zod";
import { AppError } from "@/lib/errors";
import type { LetterFilter } from "@/lib/triage/queries";

/**
 * Which letters of one DLQ an operation acts on, as the operator chose them (a filter over the
 * triage index, a group, or letters picked by hand): its schema, the index filter it stands for, its
 * wording for audit rows, and the check that it still holds the count the operator confirmed.
 * Redrive and discard select letters the same way.
 */

const dateText = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 date and time");

export const dlqSchema = z.object({ connectionId: z.string().min(1).max(200), queue: z.string().min(1).max(1000) });

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

/** The index filter (and hand-picked ids) a selection stands for, in one DLQ. */
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
 * count or the redrive's preview.
 */
export function assertConfirmedCount(n: number, confirmed: number, review: "count" | "preview"): void {
  if (n === confirmed) return;
  throw new AppError("conflict:count", {
    userMessage: `The selection now holds ${n} letter${n === 1 ? "" : "s"}, not the ${confirmed} you confirmed. Review the ${review} and confirm again.`,
    details: { count: n },
  });
}
