/**
 * Repair and resubmit on RabbitMQ: RabbitMQ's limits on a repair (the shared refusal,
 * `repairRefusal` in move-rules.ts, applies them), and the edits of a letter's copy as bytes. The
 * bytes are written by the mover (`rebuildProperties` with these edits), which copies everything
 * not named here exactly.
 *
 * Header names are compared as the broker holds them: an AMQP field name is a shortstr of bytes,
 * so an operator's name is matched by its UTF-8 bytes against each entry's raw name bytes. The
 * table code keys names as latin1 strings (one char per byte), so `nameKey` turns a name into that
 * form; two names that differ only in case are different headers to RabbitMQ.
 */
import { REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { LetterRepair } from "@/lib/brokers/contract/move";
import type { RepairRules } from "@/lib/brokers/move-rules";
import {
  F_CORRELATION_ID,
  F_MESSAGE_ID,
  longstrEntry,
  type PropertyEdits,
} from "@/lib/brokers/rabbitmq/amqp-properties";

const SHORTSTR_MAX = 255;

const quoted = (name: string) => `"${name.length > 80 ? `${name.slice(0, 80)}…` : name}"`;

/** What RabbitMQ accepts in a repair: header names and the correlation id are shortstrs (at most 255 bytes). */
export const REPAIR_RULES: RepairRules = {
  noun: "header",
  managedBy: "RabbitMQ or the console (broker history and x-dlq-* markers)",
  dlq: "DLQ",
  nameProblem: (name) =>
    Buffer.byteLength(name, "utf8") > SHORTSTR_MAX
      ? `The header name ${quoted(name)} is not one RabbitMQ accepts (1 to 255 bytes).`
      : null,
  otherProblem: (repair) =>
    repair.correlationId !== undefined && Buffer.byteLength(repair.correlationId, "utf8") > SHORTSTR_MAX
      ? "The new correlation id is longer than RabbitMQ's 255 bytes."
      : null,
};

/** The name as the table code keys it: its UTF-8 bytes, one latin1 char per byte. */
export function nameKey(name: string): string {
  return Buffer.from(name, "utf8").toString("latin1");
}

/** The operator's header edits, keyed as `nameKey` gives them: the new text value, or null to drop the header. */
export function headerEdits(repair: LetterRepair): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const [name, value] of Object.entries(repair.setHeaders ?? {})) out.set(nameKey(name), value);
  for (const name of repair.removeHeaders ?? []) out.set(nameKey(name), null);
  return out;
}

/**
 * A repair's edits as bytes: the operator's headers (text values, 'S'), the repair marker, and a
 * new message (message-id = the replay id; correlation-id only where the operator gave one).
 */
export function repairEditsOf(repair: LetterRepair, newMessageId: string): PropertyEdits {
  const headers = new Map<string, Buffer | null>();
  for (const [key, value] of headerEdits(repair)) headers.set(key, value === null ? null : longstrEntry(key, value));
  headers.set(nameKey(REPAIR_HEADER), longstrEntry(REPAIR_HEADER, repair.operationId));
  const shortstrs = new Map<number, string>([[F_MESSAGE_ID, newMessageId]]);
  if (repair.correlationId !== undefined) shortstrs.set(F_CORRELATION_ID, repair.correlationId);
  return { headers, shortstrs };
}
