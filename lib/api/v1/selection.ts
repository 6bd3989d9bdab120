import { z } from "zod";
import { filterSchema, selectionSchema } from "@/lib/selection/selection";

/**
 * The selection of letters as /api/v1 documents it (redrives and discards take the same one), and
 * the fields their plans share: the DLQ and the selection asked about, and the count to confirm.
 */

const f = filterSchema.shape;
const filterDoc = filterSchema
  .extend({
    groupKey: f.groupKey.meta({ description: "A triage group's key (`groupKey` of a group in the groups list)." }),
    exceptionClass: f.exceptionClass.meta({
      description: "Exact exception class, e.g. `java.net.SocketTimeoutException`.",
    }),
    reason: f.reason.meta({
      description:
        "The broker's dead-letter reason (RabbitMQ x-death reason: rejected, expired, maxlen, delivery_limit).",
    }),
    origin: f.origin.meta({ description: "The queue or topic the letters came from." }),
    from: f.from.meta({ description: "Letters dead-lettered at or after this instant (ISO 8601)." }),
    to: f.to.meta({ description: "Letters dead-lettered at or before this instant (ISO 8601)." }),
    header: f.header.meta({ description: "Letters carrying this header with exactly this value." }),
    text: f.text.meta({
      description: "Letters whose searchable text (ids, headers, payload as your role may see it) contains this.",
    }),
  })
  .meta({
    description:
      "Every field narrows (AND); no field at all selects every letter in the DLQ. Unknown fields are refused.",
  });

const [filterOption, groupOption, lettersOption] = selectionSchema.options;

export const v1SelectionSchema = z
  .discriminatedUnion("kind", [
    filterOption.extend({ filter: filterDoc }).meta({
      description:
        '`{ kind: "filter", filter: {} }` is every letter of the DLQ; fields narrow it as the letters list\'s filters do.',
    }),
    groupOption.meta({ description: "One triage group: every letter of the DLQ whose group key is `groupKey`." }),
    lettersOption.meta({
      description:
        "Letters chosen by id (`letterId` from the letters list), 1 to 10,000; ids no longer in the DLQ are not counted.",
    }),
  ])
  .meta({
    id: "Selection",
    description:
      "Which letters of the DLQ (as they are in the triage index: scan the DLQ first) an action applies to: all of them, a triage group, a filter, or chosen ids. Counted as your role sees the letters: a filter never matches on values masked for you.",
  });

/** A plan request's DLQ and selection, documented; `shape` is the use case's own request schema's. */
export function selectionRequestFields<C extends z.ZodType, Q extends z.ZodType>(shape: { connectionId: C; queue: Q }) {
  return {
    connectionId: shape.connectionId.meta({
      description: "The connection's id, as in GET /api/v1/dlqs.",
    }),
    queue: shape.queue.meta({ description: "The DLQ's name." }),
    selection: v1SelectionSchema,
  };
}

/** What a plan answers first: the DLQ, the count to confirm, and the selection in words. */
export function planCountFields() {
  return {
    connectionId: z.string(),
    queue: z.string(),
    count: z
      .number()
      .int()
      .meta({ description: "Letters the selection holds now: pass it as `confirmedCount` to start." }),
    scope: z.string().meta({ description: "The selection in words." }),
  };
}
