import { z } from "zod";
import { defineOperation } from "../registry";

/**
 * What the v1 operations of ledger jobs (redrives, discards) share: the list by cursor and its
 * page, the `{id}` of one job, and one job's detail (the job, its counts per ledger state and a
 * keyset page of its ledger) with the query of that page. Each kind words its own descriptions.
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

/**
 * GET /{noun}: the kind's jobs newest first, by cursor (`noun` plural: "redrives"), answered as a
 * page of `item` registered under `pageId`.
 */
export function ledgerJobListOperation<T extends z.ZodType>(o: {
  tag: string;
  noun: string;
  description: string;
  item: T;
  pageId: string;
}) {
  const title = `${o.noun[0].toUpperCase()}${o.noun.slice(1)}`;
  return defineOperation({
    method: "get",
    tag: o.tag,
    path: `/${o.noun}`,
    operationId: `list${title}`,
    summary: `${title}, newest first, by cursor`,
    description: o.description,
    problems: [400, 403],
    query: jobListQuerySchema(o.noun),
    response: jobPageOf(o.item, o.pageId),
  });
}

/** `{id}` of one job of the kind (`noun` singular: "redrive"). */
export function jobIdParams(noun: string) {
  return z.object({
    id: z
      .string()
      .min(1)
      .max(100)
      .meta({ description: `The ${noun}'s id.` }),
  });
}

/** The query of one job's ledger page: after a seq, a page size (100 by default), one state. */
export function ledgerPageQuerySchema<S extends string>(states: readonly S[], docs: { after: string; limit?: string }) {
  const limit = z.coerce.number().int().min(1).max(1000).default(100);
  return z.object({
    after: z.coerce.number().int().min(0).optional().meta({ description: docs.after }),
    limit: docs.limit ? limit.meta({ description: docs.limit }) : limit,
    state: z
      .enum(states as unknown as [S, ...S[]])
      .optional()
      .meta({ description: "Only ledger rows in this state." }),
  });
}

/**
 * One job (under `key`: "redrive"), its counts per ledger state and a page of its ledger rows,
 * registered under `id`.
 */
export function ledgerJobDetailOf<K extends string, J extends z.ZodType, R extends z.ZodType>(o: {
  key: K;
  job: J;
  row: R;
  id: string;
  counts: string;
  ledger?: string;
}) {
  const ledger = z.array(o.row);
  const shape = {
    [o.key]: o.job,
    counts: z.record(z.string(), z.number().int()).meta({ description: o.counts }),
    ledger: o.ledger ? ledger.meta({ description: o.ledger }) : ledger,
    nextAfter: z
      .number()
      .int()
      .nullable()
      .meta({ description: "Pass as `after` for the next ledger page; null on the last." }),
  } as { [P in K]: J } & {
    counts: z.ZodRecord<z.ZodString, z.ZodNumber>;
    ledger: z.ZodArray<R>;
    nextAfter: z.ZodNullable<z.ZodNumber>;
  };
  return z.object(shape).meta({ id: o.id });
}
