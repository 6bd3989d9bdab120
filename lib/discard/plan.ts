import { z } from "zod";
import { dlqSchema, selectionSchema } from "@/lib/selection/selection";

/**
 * The one letter a letter's page offers to discard when the triage index does not hold it (its DLQ
 * was never scanned): its id and its checksum as that page showed it to the admin (the SHA-256, or
 * the keyed digest where masking hides the raw one). The start reads the letter once and refuses it
 * unless its checksum is still the one shown; the job then removes it only if the DLQ's copy still
 * has it, as for indexed letters. Used only when the selection is exactly this letter and the index
 * has none of it.
 */
export const unindexedLetterSchema = z.object({
  letterId: z.string().min(1).max(1000),
  digest: z.string().regex(/^[0-9A-Za-z:_-]{16,200}$/, "The letter's checksum is not one its page shows."),
});
export type UnindexedLetter = z.output<typeof unindexedLetterSchema>;

/** A discard's input, validated at the use-case boundary; the selection is the redrive's (filter, group, letters). */
export const discardPreviewSchema = dlqSchema.extend({
  selection: selectionSchema,
  unindexed: unindexedLetterSchema.optional(),
});

/** The unindexed letter of a request, when its selection is exactly that letter. */
export function unindexedOf(p: {
  selection: { kind: string; letterIds?: string[] };
  unindexed?: UnindexedLetter;
}): UnindexedLetter | null {
  const ids = p.selection.kind === "letters" ? [...new Set(p.selection.letterIds ?? [])] : [];
  return p.unindexed && ids.length === 1 && ids[0] === p.unindexed.letterId ? p.unindexed : null;
}

export const discardStartSchema = discardPreviewSchema.extend({
  reason: z.string().trim().min(3, "State why these letters are discarded.").max(2000),
  confirmedCount: z.number().int().min(1),
  acceptRisk: z.boolean().default(false),
});
