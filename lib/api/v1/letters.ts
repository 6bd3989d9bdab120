import { z } from "zod";
import type { OpenDlqResult } from "@/lib/dlq/open-dlq";
import type { ViewLetterResult } from "@/lib/dlq/view-letter";
import { AppError } from "@/lib/errors";
import { defineOperation } from "../registry";

/**
 * Letters read from a DLQ's broker (the letters page and the letter page as a script sees them).
 * Shapes only: the routes call openDlq and viewLetter, which authorize, mask and audit.
 */

const dlqParams = {
  connectionId: z.string().min(1).max(100).meta({ description: "The connection's id, as GET /api/v1/dlqs lists it." }),
  queue: z.string().min(1).max(255).meta({ description: "The DLQ's name (URL-encoded in the path)." }),
};

export const dlqPathSchema = z.object(dlqParams);
export const letterPathSchema = z.object({
  ...dlqParams,
  letterId: z.string().min(1).max(512).meta({ description: "The letter's `id` from a page of letters." }),
});

/**
 * A header or property value, tagged by `t` so its type survives JSON: string, number (decimal
 * text, exact for 64-bit integers), boolean, null, timestamp (ISO 8601), bytes (base64 `v`, `text`
 * when UTF-8), array and table (nested values).
 */
const displayValueSchema = z
  .object({
    t: z.enum(["string", "number", "boolean", "null", "timestamp", "bytes", "array", "table"]),
    v: z.unknown().optional(),
    size: z.number().int().optional(),
    text: z.string().optional(),
  })
  .meta({
    id: "DisplayValue",
    description:
      "A header or property value tagged by `t`: string, number (decimal text), boolean, null, timestamp (ISO 8601), bytes (`v` base64, `text` when UTF-8), array (`v` a list of values), table (`v` a list of [name, value] pairs).",
  });

const headerEntrySchema = z.object({ name: z.string(), value: displayValueSchema }).meta({ id: "HeaderEntry" });

const failureSchema = z
  .object({
    deadLetteredAt: z.iso.datetime().nullable(),
    reason: z.string().nullable().meta({
      description:
        "rejected | expired | maxlen | delivery_limit | maxReceiveCount | exception …, as the broker tells it.",
    }),
    originQueue: z.string().nullable(),
    exchange: z.string().nullable(),
    routingKeys: z.array(z.string()),
    count: z
      .number()
      .int()
      .nullable()
      .meta({ description: "How many times it died or was received (x-death count, ApproximateReceiveCount)." }),
    deliveryCount: z.number().int().nullable(),
    exceptionClass: z.string().nullable(),
    exceptionMessage: z
      .string()
      .nullable()
      .meta({ description: "Masked by the masking rules that apply to the token's role." }),
    stackTrace: z.string().nullable(),
  })
  .meta({ id: "Failure", description: "Why and where the letter died. Absent facts are null, never guessed." });

const handledSchema = z
  .object({ at: z.iso.datetime(), outcome: z.enum(["redriven", "discarded"]) })
  .nullable()
  .meta({ description: "Set when the console already handled the letter but the broker keeps it (Kafka)." });

const letterRowSchema = z
  .object({
    id: z.string().meta({ description: "Stable id of the letter; open it with GET …/letters/{letterId}." }),
    position: z.number().int().meta({ description: "0-based position in the DLQ at the time of the read." }),
    messageId: z.string().nullable(),
    bodySize: z.number().int(),
    sha256: z
      .string()
      .meta({ description: "SHA-256 of the payload; a keyed digest where masking rules apply to the role." }),
    contentType: z.string().nullable(),
    failure: failureSchema,
    handled: handledSchema,
  })
  .meta({ id: "LetterRow" });

export const lettersQuerySchema = z.object({
  cursor: z.string().trim().min(1).max(200).optional().meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const letterPageSchema = z
  .object({
    items: z.array(letterRowSchema),
    nextCursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last." }),
    depth: z
      .number()
      .int()
      .nullable()
      .meta({ description: "Letters in the DLQ as the broker told it during this read." }),
    unreached: z
      .object({
        reason: z.string().meta({ description: "Why, in words for the operator." }),
        letters: z.number().int().nullable().meta({ description: "How many, when the broker says." }),
      })
      .nullable()
      .meta({
        description:
          "On the last page this read reached: letters the DLQ holds (they count in `depth`) that no page of it shows, e.g. SQS letters in flight with another reader or consumer, or the later letters of a FIFO message group. Null: none known.",
      }),
  })
  .meta({ id: "LetterPage" });

export const listDlqLettersOperation = defineOperation({
  method: "get",
  tag: "Letters",
  path: "/dlqs/{connectionId}/{queue}/letters",
  operationId: "listDlqLetters",
  summary: "A page of a DLQ's letters, read from the broker",
  description:
    "Metadata and failure fields of a page of letters, read from the broker without removing any (payloads are not included). Pages are positions in the DLQ at the time of each read: letters that arrive or leave between pages shift them. Needs dlq:browse (every role); audited `dlq.open`. A DLQ whose reads cost letters (a quorum queue with a delivery limit, an SQS DLQ that is itself a redrive source) is never read here, as its page never reads it: 409 `confirmation_required:read`. Its letters as the latest confirmed read saw them are served without reading it by GET /api/v1/letters, and POST /api/v1/scans with `acceptRisk` is the one confirmed read, into that snapshot.",
  problems: [400, 403, 404, 409, 503],
  params: dlqPathSchema,
  query: lettersQuerySchema,
  response: letterPageSchema,
});

/** A page cursor: where the next page starts in the DLQ. Opaque to clients. */
export function encodeLetterCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString("base64url");
}

export function decodeLetterCursor(cursor: string | undefined): number {
  if (!cursor) return 0;
  try {
    const o = (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { o?: unknown }).o;
    if (typeof o === "number" && Number.isSafeInteger(o) && o >= 0) return o;
  } catch {
    /* answered below */
  }
  throw new AppError("bad_request:cursor", {
    userMessage: "The page cursor is not valid; start again from the first page.",
  });
}

/**
 * The refusal of a read that would cost letters: what the risk is, and how to get the letters
 * without it (the snapshot of the latest confirmed read, or one confirmed read into a snapshot).
 */
export function riskyReadRefusal(
  risk: { message: string },
  ref: { connectionId: string; queue: string },
  snapshot: boolean,
): AppError {
  const q = `connectionId=${encodeURIComponent(ref.connectionId)}&queue=${encodeURIComponent(ref.queue)}`;
  const way = snapshot
    ? `Its letters as the latest confirmed read saw them are served without reading it: GET /api/v1/letters?${q}.`
    : "No confirmed read of it is on record: POST /api/v1/scans with acceptRisk true reads it once into a snapshot that GET /api/v1/letters then serves.";
  return new AppError("confirmation_required:read", {
    userMessage: `Reading this DLQ can cost letters: ${risk.message} ${way}`,
  });
}

export function toLetterPage(r: OpenDlqResult): z.output<typeof letterPageSchema> {
  const letters = r.letters ?? [];
  // An empty page that says there is more would send a client round in circles: it ends the list.
  const next = r.hasMore && letters.length > 0 ? encodeLetterCursor(r.offset + letters.length) : null;
  const unreached = r.unreached ? { reason: r.unreached.reason, letters: r.unreached.unread } : null;
  return letterPageSchema.parse({ items: letters, nextCursor: next, depth: r.depth, unreached });
}

const payloadViewSchema = z
  .object({
    kind: z.enum(["json", "text", "hex", "hidden"]),
    text: z.string().meta({
      description:
        "JSON pretty-printed, text as text, anything else as a hex dump; masked by the rules for the token's role. For `hidden`, why the payload cannot be shown masked.",
    }),
    base64: z
      .string()
      .optional()
      .meta({ description: "hex only: the bytes the dump shows (masked bytes zeroed, see maskedRanges)." }),
    maskedRanges: z
      .array(z.tuple([z.number().int(), z.number().int()]))
      .optional()
      .meta({ description: "hex only: [start, end) byte ranges masked for the token's role." }),
    note: z.string().nullable().meta({ description: "Why the view is shortened or shown as it is, when it is." }),
  })
  .nullable()
  .meta({
    id: "PayloadView",
    description: "Null when the token's role may not see this DLQ's payloads (viewers on a sensitive DLQ).",
  });

const maskingSchema = z
  .object({
    payloadMasked: z.boolean(),
    maskedCount: z.number().int().meta({ description: "Values replaced in the payload and headers." }),
    sensitive: z.boolean().meta({ description: "The DLQ is marked sensitive." }),
  })
  .meta({ id: "LetterMasking" });

const deathSchema = z.object({
  queue: z.string().nullable(),
  reason: z.string().nullable(),
  count: z.number().int().nullable(),
  time: z.iso.datetime().nullable(),
  exchange: z.string().nullable(),
  routingKeys: z.array(z.string()),
  extra: z.array(headerEntrySchema),
});

const brokerLetterSchema = z
  .object({
    source: z.literal("broker").meta({ description: "Read from the broker just now." }),
    id: z.string(),
    position: z.number().int(),
    messageId: z.string().nullable(),
    correlationId: z.string().nullable(),
    bodySize: z.number().int(),
    bodyTruncated: z.boolean(),
    sha256: z.string(),
    contentType: z.string().nullable(),
    contentEncoding: z.string().nullable(),
    properties: z.array(headerEntrySchema),
    headers: z.array(headerEntrySchema).meta({ description: "Masked by the rules for the token's role." }),
    failure: failureSchema,
    history: z.array(deathSchema).meta({ description: "Dead-lettering events, most recent first." }),
    orderingKey: z.string().nullable(),
    handled: handledSchema,
    warnings: z.array(z.object({ code: z.string(), label: z.string(), message: z.string() })),
    payload: payloadViewSchema,
    masking: maskingSchema,
  })
  .meta({ id: "BrokerLetter" });

const snapshotLetterSchema = z
  .object({
    source: z.literal("snapshot").meta({
      description: "From the triage index of the DLQ's latest read; the broker was not read (its reads cost letters).",
    }),
    id: z.string(),
    messageId: z.string().nullable(),
    arrivedAt: z.iso.datetime(),
    deadLetteredAt: z.iso.datetime().nullable(),
    lastSeenAt: z.iso.datetime(),
    goneAt: z.iso.datetime().nullable().meta({ description: "Set when a later read no longer found it." }),
    reason: z.string().nullable(),
    originQueue: z.string().nullable(),
    exceptionClass: z.string().nullable(),
    exceptionMessage: z.string().nullable(),
    groupKey: z.string(),
    groupLabel: z.string(),
    receiveCount: z.number().int().nullable(),
    bodySize: z.number().int(),
    sha256: z.string(),
    headers: z.array(headerEntrySchema),
    payload: payloadViewSchema,
    masking: maskingSchema,
  })
  .meta({ id: "SnapshotLetter" });

export const letterSchema = z
  .discriminatedUnion("source", [brokerLetterSchema, snapshotLetterSchema])
  .meta({ id: "Letter" });

export const getDlqLetterOperation = defineOperation({
  method: "get",
  tag: "Letters",
  path: "/dlqs/{connectionId}/{queue}/letters/{letterId}",
  operationId: "getDlqLetter",
  summary: "One letter: headers, failure fields and payload view",
  description:
    "The letter as its page shows it: properties, headers and failure fields, and the payload as a view (JSON, text or hex) for roles that may see payloads here, all masked by the rules for the token's role. Needs letter:read (every role); audited `letter.view`. On a DLQ whose reads cost letters the letter comes from the latest confirmed read's snapshot (`source: snapshot`) and the broker is never read; a letter the snapshot lacks is 409 `confirmation_required:read` (POST /api/v1/scans with `acceptRisk` reads the DLQ once into a new snapshot). A letter that is no longer in the DLQ is 404.",
  problems: [400, 403, 404, 409, 503],
  params: letterPathSchema,
  response: letterSchema,
});

export function toLetter(r: ViewLetterResult): z.output<typeof letterSchema> {
  if (r.letter) return letterSchema.parse({ source: "broker", ...r.letter });
  if (r.snapshot) {
    const { letter: s, headers, payload, masking } = r.snapshot;
    return letterSchema.parse({ source: "snapshot", ...s, id: s.letterId, headers, payload, masking });
  }
  if (r.needsConfirmation) {
    throw new AppError("confirmation_required:read", {
      userMessage: `Reading this DLQ can cost letters: ${r.dlq.readRisk?.message ?? ""} No snapshot of a confirmed read holds this letter: POST /api/v1/scans with acceptRisk true reads the DLQ once into a new one.`,
    });
  }
  throw new AppError("not_found:letter", {
    userMessage: "This letter is not in the DLQ (any more): it was redriven, discarded or expired, or the id is wrong.",
  });
}
