import { z } from "zod";
import type { IndexedLetter } from "@/lib/triage/queries";
import type { GroupsResult } from "@/lib/triage/use-cases";
import { defineOperation } from "../registry";
import { scanSchema } from "./scans";

/**
 * Reads of the triage index (what the latest scan of a DLQ found): its groups and the filtered
 * set of its letters. Shapes only: the routes call listGroups and listLetters, which authorize,
 * mask and evaluate filters as the token's role sees the letters.
 */

const dlqQuery = {
  connectionId: z.string().trim().min(1).max(100),
  queue: z.string().trim().min(1).max(255),
};

export const groupsQuerySchema = z.object({
  ...dlqQuery,
  by: z
    .string()
    .regex(/^(group|origin|reason|class|header:.{1,200})$/)
    .default("group")
    .meta({
      description:
        "`group` (the grouping key: exception class, normalised message, top frame), or `origin`, `reason`, `class`, `header:<name>`.",
    }),
});

const exceptionGroupSchema = z
  .object({
    groupKey: z.string().meta({ description: "Pass as `group` to GET /api/v1/letters for the group's letters." }),
    label: z.string(),
    basis: z.string().meta({ description: "What the key is made of (exception, reason, …)." }),
    exceptionClass: z.string().nullable(),
    normalizedMessage: z.string().nullable(),
    topFrame: z.string().nullable(),
    reason: z.string().nullable(),
    count: z.number().int(),
    share: z.number().meta({ description: "count / letters in the DLQ, 0..1." }),
    handledCount: z.number().int(),
    firstAt: z.iso.datetime(),
    lastAt: z.iso.datetime(),
    origins: z.array(z.string()),
    versions: z.array(z.string()),
    sampleLetterIds: z.array(z.string()),
    disposition: z
      .enum(["transient", "permanent", "unknown"])
      .meta({ description: "As the classification rules say." }),
    ruleId: z.string().nullable(),
    buckets: z.array(z.object({ start: z.iso.datetime(), count: z.number().int() })),
    bucketSeconds: z.number().int(),
    burst: z.object({
      burst: z.boolean(),
      from: z.iso.datetime().nullable(),
      to: z.iso.datetime().nullable(),
      share: z.number(),
    }),
    refreshedAt: z.iso.datetime(),
  })
  .meta({ id: "Group" });

const valueGroupSchema = z
  .object({
    value: z.string().nullable().meta({
      description: "The value grouped by (masked as the role sees it; values that mask alike are one group).",
    }),
    count: z.number().int(),
    share: z.number(),
    firstAt: z.iso.datetime(),
    lastAt: z.iso.datetime(),
  })
  .meta({ id: "ValueGroup" });

export const groupListSchema = z
  .object({
    by: z.string(),
    total: z.number().int().meta({ description: "Letters in the groups." }),
    groups: z
      .array(z.union([exceptionGroupSchema, valueGroupSchema]))
      .meta({ description: "Largest first, at most 500: `Group` for by=group, else `ValueGroup`." }),
    lastScan: scanSchema
      .nullable()
      .meta({ description: "The latest scan of the DLQ, which the groups reflect once it succeeded." }),
  })
  .meta({ id: "GroupList" });

export const listGroupsOperation = defineOperation({
  method: "get",
  tag: "Triage",
  path: "/groups",
  operationId: "listGroups",
  summary: "Why letters died: a DLQ's groups",
  description:
    "The groups of a DLQ's letters in the triage index, largest first (at most 500, so not paged). Labels and values are masked for the token's role. Needs triage:read (every role). Empty until a scan of the DLQ succeeded (POST /api/v1/scans).",
  problems: [400, 403],
  query: groupsQuerySchema,
  response: groupListSchema,
});

export function toGroupList(r: GroupsResult): z.output<typeof groupListSchema> {
  return groupListSchema.parse(r);
}

export const indexedLettersQuerySchema = z.object({
  ...dlqQuery,
  group: z.string().max(200).optional().meta({ description: "A group's `groupKey`." }),
  class: z.string().max(500).optional().meta({ description: "Exact exception class." }),
  reason: z.string().max(100).optional(),
  origin: z.string().max(255).optional().meta({ description: "Exact origin queue or topic." }),
  from: z.iso.datetime({ offset: true }).optional().meta({ description: "Arrived at or after (ISO 8601)." }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: "Arrived at or before (ISO 8601)." }),
  header: z.string().max(1000).optional().meta({
    description:
      "`name:value`, an exact header value. Refused (403 `forbidden:filter`) when the role's masking rules hide values like it.",
  }),
  q: z.string().max(500).optional().meta({
    description:
      "Text in the exception class or message as the role sees it (masked text is not searchable), or an exact letter id, message id or digest.",
  }),
  gone: z.enum(["0", "1"]).default("0").meta({ description: "`1` includes letters a later scan found gone." }),
  cursor: z.string().trim().min(1).max(200).optional().meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/** The filter's query parameters as lib/triage/filter-params.ts parseLetterFilter reads them (one meaning for the pages and the API). */
export function letterFilterParams(q: z.output<typeof indexedLettersQuerySchema>): URLSearchParams {
  const p = new URLSearchParams();
  for (const key of [
    "connectionId",
    "queue",
    "group",
    "class",
    "reason",
    "origin",
    "from",
    "to",
    "header",
    "q",
    "gone",
  ] as const) {
    const v = q[key];
    if (v !== undefined && v !== "") p.set(key, v);
  }
  return p;
}

const indexedLetterSchema = z
  .object({
    letterId: z
      .string()
      .meta({ description: "Open it with GET /api/v1/dlqs/{connectionId}/{queue}/letters/{letterId}." }),
    position: z.number().int(),
    kafkaPartition: z.number().int().nullable(),
    kafkaOffset: z.string().nullable(),
    messageId: z.string().nullable(),
    arrivedAt: z.iso.datetime(),
    deadLetteredAt: z.iso.datetime().nullable(),
    firstSeenAt: z.iso.datetime(),
    lastSeenAt: z.iso.datetime(),
    goneAt: z.iso.datetime().nullable(),
    reason: z.string().nullable(),
    originQueue: z.string().nullable(),
    exceptionClass: z.string().nullable(),
    exceptionMessage: z.string().nullable(),
    groupKey: z.string(),
    groupLabel: z.string(),
    disposition: z.string(),
    ruleId: z.string().nullable(),
    receiveCount: z.number().int().nullable(),
    headers: z.record(z.string(), z.string()).meta({ description: "Header values as text, masked for the role." }),
    bodySize: z.number().int(),
    sha256: z.string(),
    fingerprint: z.string(),
    payloadTruncated: z.boolean(),
    handledOutcome: z.string().nullable(),
  })
  .meta({ id: "IndexedLetter" });

export const indexedLetterPageSchema = z
  .object({
    items: z.array(indexedLetterSchema),
    count: z.number().int().meta({
      description:
        "Letters in the whole filtered set; when `countAtLeast` is true, a lower bound (the set is counted up to 10,000).",
    }),
    countAtLeast: z.boolean().meta({
      description: "True when the set holds more than `count` letters: `count` is then the cap, not the size.",
    }),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: "Pass as `cursor` for the next (older) page; null on the last." }),
  })
  .meta({ id: "IndexedLetterPage" });

export const listIndexedLettersOperation = defineOperation({
  method: "get",
  tag: "Triage",
  path: "/letters",
  operationId: "listIndexedLetters",
  summary: "The filtered set of a DLQ's letters from the triage index",
  description:
    "Letters of the DLQ's latest scans matching every filter given, newest first, by cursor, with the set's count: the set a redrive or discard selection by filter applies to. Read from the index, never from the broker (also for a DLQ whose reads cost letters). Filters are evaluated as the token's role sees the letters, so no answer differs for a right and a wrong guess of a masked value. Needs triage:read (every role); a text or header search over a sensitive DLQ is audited `triage.search`.",
  problems: [400, 403],
  query: indexedLettersQuerySchema,
  response: indexedLetterPageSchema,
});

export function toIndexedLetterPage(r: {
  letters: IndexedLetter[];
  count: number;
  countAtLeast: boolean;
  nextCursor: string | null;
}): z.output<typeof indexedLetterPageSchema> {
  return indexedLetterPageSchema.parse({
    items: r.letters,
    count: r.count,
    countAtLeast: r.countAtLeast,
    nextCursor: r.nextCursor,
  });
}
