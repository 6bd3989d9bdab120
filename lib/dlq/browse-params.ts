/** The DLQ page's search params, validated: a bad URL gets a clear message, never a crash. Pure. */
import { z } from "zod";
import { parsePaging, type Position } from "./links";

const blankToUndefined = (v: unknown) => (v === "" ? undefined : v);
const once = (what: string) => ({ error: `Give ${what} once, as plain text.` });

export const browseParamsSchema = z
  .object({
    page: z.string(once("page")).optional(),
    size: z.string(once("size")).optional(),
    partition: z.preprocess(
      blankToUndefined,
      z
        .string(once("partition"))
        .regex(/^\d{1,9}$/, "Partition must be a whole number, such as 0.")
        .transform(Number)
        .optional(),
    ),
    from: z.preprocess(
      blankToUndefined,
      z
        .string(once("from"))
        .regex(/^\d{1,19}$/, "From offset must be digits only, such as 1200.")
        .optional(),
    ),
    order: z.preprocess(
      blankToUndefined,
      z.enum(["oldest", "newest"], { error: 'Order must be "oldest" or "newest".' }).optional(),
    ),
  })
  .refine((p) => p.from === undefined || p.partition !== undefined, {
    message: "A from offset needs a partition: choose one first.",
    path: ["from"],
  });

export type BrowseParams = { page: number; size: number } & Required<Pick<Position, "order">> & {
    partition: number | null;
    from: string | null;
  };

export function parseBrowseParams(
  sp: Record<string, string | string[] | undefined>,
): { ok: true; value: BrowseParams } | { ok: false; message: string } {
  const r = browseParamsSchema.safeParse({
    page: sp.page,
    size: sp.size,
    partition: sp.partition,
    from: sp.from,
    order: sp.order,
  });
  if (!r.success) return { ok: false, message: r.error.issues.map((i) => i.message).join(" ") };
  const { page, size } = parsePaging(r.data.page, r.data.size);
  return {
    ok: true,
    value: {
      page,
      size,
      partition: r.data.partition ?? null,
      from: r.data.from ?? null,
      order: r.data.order ?? "oldest",
    },
  };
}
