/**
 * Repair and resubmit on Kafka: the headers and value of a repaired copy, and Kafka's
 * rules for the shared `repairRefusal` (which headers Kafka or the console keeps, Kafka's limits).
 * The move itself (produce, archive through `beforeRemove`, then the handled mark) is the mover's.
 *
 * Decisions:
 * - Kafka allows a header name more than once. A set header replaces ALL entries of its name with
 *   one entry holding the new value, at the place of the first: a consumer reading the first value
 *   and one reading the last (Java's `lastHeader`) must both see the edit, and one value is what the
 *   operator saw and changed. A name the record lacks is added at the end. A removed name loses
 *   every entry.
 * - Values are written as UTF-8 text (`LetterRepair.setHeaders` holds text).
 * - A new message id: every message-id header the console reads as the letter's id (`message-id`,
 *   `messageId`, `message_id`, `x-message-id`, CloudEvents `ce_id`; any case) takes the replay id, so
 *   a consumer that deduplicates on it does not drop the repaired copy as a repeat. A record without
 *   one gets none (its identity is topic/partition/offset). An explicit `setHeaders` of such a name
 *   is applied after this, so the operator's value wins.
 * - Correlation id (`LetterRepair.correlationId`, only when asked): replaces every `correlation-id`
 *   and `correlationId` header (any case); without one, `correlation-id` is added at the end. It is
 *   applied last, after `setHeaders`.
 */
import type { LetterRepair } from "@/lib/brokers/contract/move";
import type { RepairRules } from "@/lib/brokers/move-rules";
import { MESSAGE_ID_NAMES } from "@/lib/brokers/kafka/letter";

const MESSAGE_ID_LOWER = new Set(MESSAGE_ID_NAMES.map((n) => n.toLowerCase()));
const CORRELATION_NAMES = new Set(["correlation-id", "correlationid"]);

/** Text that UTF-8 encodes and decodes back to itself (no lone surrogate). */
const keepsItsText = (s: string) => Buffer.from(s, "utf8").toString("utf8") === s;

/** Kafka's words and limits for `repairRefusal` (lib/brokers/move-rules.ts). */
export const KAFKA_REPAIR_RULES: RepairRules = {
  noun: "header",
  managedBy: "Kafka or the console (failure history and the console's own x-dlq-* markers)",
  dlq: "DLT",
  nameProblem: (name) =>
    keepsItsText(name)
      ? null
      : `The header name "${name}" is not valid Unicode text (a lone surrogate): Kafka stores names as UTF-8 and would keep another name.`,
  otherProblem: (repair) => {
    const bad = Object.entries(repair.setHeaders ?? {}).find(([, v]) => !keepsItsText(v));
    if (bad)
      return `The value of header "${bad[0]}" is not valid Unicode text (a lone surrogate): Kafka would keep other bytes than the ones asked for.`;
    if (repair.correlationId !== undefined && !keepsItsText(repair.correlationId))
      return "The correlation id is not valid Unicode text (a lone surrogate): Kafka would keep other bytes than the ones asked for.";
    return null;
  },
};

type HeaderValue =
  | Buffer
  | Uint8Array
  | string
  | null
  | undefined
  | Array<Buffer | Uint8Array | string | null | undefined>;

/**
 * The record's headers with the repair applied (see the decisions above), in kafkajs's shape (one
 * key per name, repeated values as an array, insertion order kept). The console's markers are not
 * added here: `redriveHeaders` adds them to the result. Assumes `repairRefusal` returned null.
 */
export function repairHeaders(
  original: Record<string, unknown> | undefined,
  repair: LetterRepair,
  newMessageId: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const set = repair.setHeaders ?? {};
  const removed = new Set(repair.removeHeaders ?? []);
  for (const [name, v] of Object.entries(original ?? {})) {
    if (removed.has(name)) continue;
    if (Object.hasOwn(set, name)) out[name] = Buffer.from(set[name], "utf8");
    else if (MESSAGE_ID_LOWER.has(name.toLowerCase())) out[name] = Buffer.from(newMessageId, "utf8");
    else out[name] = v as HeaderValue;
  }
  for (const [name, value] of Object.entries(set))
    if (!Object.hasOwn(out, name)) out[name] = Buffer.from(value, "utf8");
  if (repair.correlationId !== undefined) {
    const id = Buffer.from(repair.correlationId, "utf8");
    const existing = Object.keys(out).filter((n) => CORRELATION_NAMES.has(n.toLowerCase()));
    for (const n of existing) out[n] = id;
    if (!existing.length) out["correlation-id"] = id;
  }
  return out;
}

/** The copy's identity at the target, as `MoveResult.copyId` gives it on Kafka. */
export const copyIdOf = (topic: string, at: { partition: number; offset: string }) =>
  `${topic}/${at.partition}/${at.offset}`;
