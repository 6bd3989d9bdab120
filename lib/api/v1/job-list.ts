import { z } from "zod";

/**
 * What the v1 lists of ledger jobs (redrives, discards) share: the query of a list by cursor, and
 * a page of items with the cursor of the next (older) page.
 */

/** `noun`: the jobs listed, plural ("redrives"). */
export function jobListQuerySchema(noun: string) {
  return z.object({
    connectionId: z.string().trim().min(1).max(200).optional(),
    queue: z
      .string()
      .trim()
      .min(1)
      .max(1000)
      .optional()
      .meta({ description: `Only this DLQ's ${noun} (with connectionId).` }),
    cursor: z.string().trim().min(1).max(300).optional().meta({ description: "`nextCursor` of the previous page." }),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  });
}

/** A page of `item`, registered in the document under `id`. */
export function jobPageOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      items: z.array(item),
      nextCursor: z
        .string()
        .nullable()
        .meta({ description: "Pass as `cursor` for the next (older) page; null on the last." }),
    })
    .meta({ id });
}
