/**
 * Repair and resubmit on Kafka (issue 18): the headers and value of a repaired copy, and the check
 * that refuses an edit of a header Kafka or the console manages. The move itself (produce, archive
 * through `beforeRemove`, then the handled mark) is the mover's walk (mover.ts).
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
import { isAppError } from "@/lib/errors";
import { isManagedHeaderName, type LetterRepair } from "@/lib/brokers/types";
import { MESSAGE_ID_NAMES } from "@/lib/brokers/kafka/letter";

const MESSAGE_ID_LOWER = new Set(MESSAGE_ID_NAMES.map((n) => n.toLowerCase()));
const CORRELATION_NAMES = new Set(["correlation-id", "correlationid"]);

/**
 * Why this repair cannot be applied on Kafka, in the operator's words, or null. Checked per letter
 * before anything is produced: a refused letter stays in the DLT and nothing is archived.
 */
export function repairProblem(repair: LetterRepair): string | null {
  if (repair.refuse) return repair.refuse;
  const set = Object.keys(repair.setHeaders ?? {});
  const removed = repair.removeHeaders ?? [];
  const managed = [...set, ...removed].filter(isManagedHeaderName);
  if (managed.length) {
    const names = [...new Set(managed)].map((n) => `"${n}"`).join(", ");
    return `Header ${names} is kept by Kafka or by the console (failure history and the console's own x-dlq-* markers) and cannot be changed by a repair. Nothing was published; the letter is still in the DLT.`;
  }
  if (set.some((n) => n === "") || removed.some((n) => n === ""))
    return "A header without a name cannot be set or removed. Nothing was published; the letter is still in the DLT.";
  const both = set.filter((n) => removed.includes(n));
  if (both.length) {
    return `Header ${both.map((n) => `"${n}"`).join(", ")} is both set and removed by the repair; say which one is meant. Nothing was published; the letter is still in the DLT.`;
  }
  return null;
}

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
 * added here: `redriveHeaders` adds them to the result. Assumes `repairProblem` returned null.
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

/**
 * Why a repaired letter stayed when `beforeRemove` threw: its copy is out, the original is not
 * handled. An AppError's operator message is given; any other error's message is not shown.
 */
export function archiveFailure(e: unknown, topic: string, copyId: string | null): string {
  const why = isAppError(e) ? `: ${e.userMessage.replace(/\.$/, "")}` : "";
  return `The repaired copy was published to topic "${topic}"${copyId ? ` (${copyId})` : ""}, but the console could not keep the original's copy in its archive${why}. The original is not marked handled and still shows as waiting in the DLT; repairing it again would publish a second copy.`;
}
