/**
 * Repair and resubmit on Pulsar (issue 18): the properties and payload of a repaired copy, and the
 * check that refuses an edit of a property Pulsar's dead-lettering or the console writes. The move
 * itself (publish, confirmation, archive through `beforeRemove`, then the acknowledgement) is the
 * mover's (mover.ts).
 *
 * Decisions:
 * - Properties are a map of text (a name once): a set property takes the new value in its place; a
 *   new one is added at the end; a removed one goes.
 * - A new message id: every property the console reads as an application message id (`message-id`,
 *   `messageId`, `message_id`, `x-message-id`, CloudEvents `ce_id`; any case) takes the replay id, so
 *   a consumer that deduplicates on it does not drop the repaired copy as a repeat; Pulsar gives the
 *   copy its own message id. An explicit `setHeaders` of such a name wins.
 * - Correlation id (only when asked): replaces `correlation-id`/`correlationId` (any case), or is
 *   added as `correlation-id`.
 * - REAL_TOPIC, REAL_SUBSCRIPTION, ORIGIN_MESSAGE_ID and the retry topic's properties are Pulsar's
 *   record of where the letter failed: locked, like the console's x-dlq-* markers.
 */
import { isAppError } from "@/lib/errors";
import { isManagedHeaderName, type LetterRepair } from "@/lib/brokers/types";

const MESSAGE_ID_NAMES = new Set(["message-id", "messageid", "message_id", "x-message-id", "ce_id"]);
const CORRELATION_NAMES = new Set(["correlation-id", "correlationid"]);
/** Pulsar's dead-letter and retry properties are among the managed names (types.ts), whatever their case. */
const isLocked = isManagedHeaderName;

/** Why this repair cannot be applied, in the operator's words, or null; checked before anything is published. */
export function repairProblem(repair: LetterRepair): string | null {
  if (repair.refuse) return repair.refuse;
  const set = Object.keys(repair.setHeaders ?? {});
  const removed = repair.removeHeaders ?? [];
  const locked = [...new Set([...set, ...removed].filter(isLocked))];
  if (locked.length) {
    return `Property ${locked.map((n) => `"${n}"`).join(", ")} is written by Pulsar's dead-lettering or by the console (where the letter failed, and the console's own x-dlq-* markers) and cannot be changed by a repair. Nothing was published; the letter is still in the DLQ.`;
  }
  if ([...set, ...removed].some((n) => n === ""))
    return "A property without a name cannot be set or removed. Nothing was published; the letter is still in the DLQ.";
  const both = set.filter((n) => removed.includes(n));
  if (both.length)
    return `Property ${both.map((n) => `"${n}"`).join(", ")} is both set and removed by the repair; say which one is meant. Nothing was published; the letter is still in the DLQ.`;
  return null;
}

/** The letter's properties with the repair applied (see the decisions above); the console's markers are added after. */
export function repairProperties(
  original: Record<string, string>,
  repair: LetterRepair,
  newMessageId: string,
): Record<string, string> {
  const set = repair.setHeaders ?? {};
  const removed = new Set(repair.removeHeaders ?? []);
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(original)) {
    if (removed.has(name)) continue;
    if (Object.hasOwn(set, name)) out[name] = set[name];
    else if (MESSAGE_ID_NAMES.has(name.toLowerCase())) out[name] = newMessageId;
    else out[name] = v;
  }
  for (const [name, v] of Object.entries(set)) if (!Object.hasOwn(out, name)) out[name] = v;
  if (repair.correlationId !== undefined) {
    const existing = Object.keys(out).filter((n) => CORRELATION_NAMES.has(n.toLowerCase()));
    for (const n of existing) out[n] = repair.correlationId;
    if (!existing.length) out["correlation-id"] = repair.correlationId;
  }
  return out;
}

/** Why a repaired letter stayed when `beforeRemove` threw: its copy is out, the original is still in the DLQ. */
export function archiveFailure(e: unknown, topic: string, copyId: string | null): string {
  const why = isAppError(e) ? `: ${e.userMessage.replace(/\.$/, "")}` : "";
  return `The repaired copy was published to topic ${topic}${copyId ? ` (${copyId})` : ""}, but the console could not keep the original's copy in its archive${why}. The original stays in the DLQ; repairing it again would publish a second copy.`;
}
