/**
 * Repair and resubmit on Pulsar: the properties and payload of a repaired copy, and
 * Pulsar's rules for the shared refusal of an edit of a property Pulsar's dead-lettering or the
 * console writes (`repairRefusal`, move-rules). The move itself (publish, confirmation, archive
 * through `beforeRemove`, then the acknowledgement) is the mover's (mover.ts).
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
import type { RepairRules } from "@/lib/brokers/move-rules";
import type { LetterRepair } from "@/lib/brokers/contract/move";

const MESSAGE_ID_NAMES = new Set(["message-id", "messageid", "message_id", "x-message-id", "ce_id"]);
const CORRELATION_NAMES = new Set(["correlation-id", "correlationid"]);

/**
 * Pulsar's own words and limits for `repairRefusal` (move-rules): its dead-letter and retry
 * properties are among the managed names (managed-headers.ts), whatever their case; property names
 * and values are any text, so Pulsar adds no limit of its own.
 */
export const PULSAR_REPAIR_RULES: RepairRules = {
  noun: "property",
  managedBy: "Pulsar's dead-lettering or the console (where the letter failed, and the console's own x-dlq-* markers)",
  dlq: "DLQ",
};

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
