import { z } from "zod";
import { dlqSchema, selectionSchema, type Selection } from "@/lib/redrive/plan";
import type { LetterFilter } from "@/lib/triage/queries";

/** A discard's input, validated at the use-case boundary; the selection is the redrive's (filter, group, letters). */
export const discardPreviewSchema = dlqSchema.extend({ selection: selectionSchema });

export const discardStartSchema = discardPreviewSchema.extend({
  reason: z.string().trim().min(3, "State why these letters are discarded.").max(2000),
  confirmedCount: z.number().int().min(1),
  acceptRisk: z.boolean().default(false),
});

export function filterOfSelection(input: { connectionId: string; queue: string }, s: Selection): { filter: LetterFilter; letterIds?: string[] } {
  // Only the DLQ: the input's own `reason` (why to discard) is not the letters' failure reason.
  const dlq = { connectionId: input.connectionId, queue: input.queue };
  if (s.kind === "group") return { filter: { ...dlq, groupKey: s.groupKey } };
  if (s.kind === "letters") return { filter: { ...dlq }, letterIds: [...new Set(s.letterIds)] };
  const f = s.filter;
  return { filter: { ...dlq, ...f, from: f.from ? new Date(f.from) : undefined, to: f.to ? new Date(f.to) : undefined } };
}

export function describeSelection(s: Selection): string {
  if (s.kind === "group") return `group ${s.groupKey}`;
  if (s.kind === "letters") return `${s.letterIds.length} chosen letter${s.letterIds.length === 1 ? "" : "s"}`;
  const parts = Object.entries(s.filter).map(([k, v]) => `${k} ${typeof v === "object" ? `${(v as { name: string }).name}=${(v as { value: string }).value}` : v}`);
  return parts.length ? `letters where ${parts.join(", ")}` : "every letter in the DLQ";
}
