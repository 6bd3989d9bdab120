import { z } from "zod";
import { dlqSchema, selectionSchema } from "@/lib/redrive/plan";

/** A discard's input, validated at the use-case boundary; the selection is the redrive's (filter, group, letters). */
export const discardPreviewSchema = dlqSchema.extend({ selection: selectionSchema });

export const discardStartSchema = discardPreviewSchema.extend({
  reason: z.string().trim().min(3, "State why these letters are discarded.").max(2000),
  confirmedCount: z.number().int().min(1),
  acceptRisk: z.boolean().default(false),
});
