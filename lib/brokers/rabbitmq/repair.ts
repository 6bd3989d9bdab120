/**
 * Repair and resubmit on RabbitMQ (issue 18): which edits of a letter's copy the adapter accepts,
 * and in what words it says why a repaired letter stayed in the DLQ. The bytes are written by the
 * mover (`rebuildProperties` with extra edits), which copies everything not named here exactly.
 *
 * Header names are compared as the broker holds them: an AMQP field name is a shortstr of bytes,
 * so an operator's name is matched by its UTF-8 bytes against each entry's raw name bytes. The
 * mover's table code keys names as latin1 strings (one char per byte), so `nameKey` turns a name
 * into that form; two names that differ only in case are different headers to RabbitMQ.
 */
import { isAppError } from "@/lib/errors";
import { isManagedHeaderName, type LetterRepair } from "@/lib/brokers/types";

const SHORTSTR_MAX = 255;

/** The name as the mover's table code keys it: its UTF-8 bytes, one latin1 char per byte. */
export function nameKey(name: string): string {
  return Buffer.from(name, "utf8").toString("latin1");
}

const quoted = (name: string) => `"${name.length > 80 ? `${name.slice(0, 80)}…` : name}"`;

/**
 * Why this repair cannot be applied to any letter, in the operator's words, or null. The console
 * checks locked fields before it asks (lib/repair); this is the adapter's own guard against a
 * crafted request, so a broker-managed or console header is never rewritten whoever calls.
 */
export function repairRefusal(repair: LetterRepair): string | null {
  if (repair.refuse) return repair.refuse;
  const set = Object.keys(repair.setHeaders ?? {});
  const remove = repair.removeHeaders ?? [];
  const managed = [...set, ...remove].find((n) => isManagedHeaderName(n));
  if (managed !== undefined) {
    return `The header ${quoted(managed)} is kept by RabbitMQ or the console (broker history and x-dlq-* markers) and cannot be changed by a repair. Nothing was published; the letter stays in the DLQ.`;
  }
  const bad = [...set, ...remove].find((n) => n.length === 0 || Buffer.byteLength(n, "utf8") > SHORTSTR_MAX);
  if (bad !== undefined)
    return `The header name ${quoted(bad)} is not one RabbitMQ accepts (1 to 255 bytes). Nothing was published; the letter stays in the DLQ.`;
  const both = set.find((n) => remove.includes(n));
  if (both !== undefined)
    return `The header ${quoted(both)} is both set and removed by this repair: keep one of the two. Nothing was published; the letter stays in the DLQ.`;
  if (repair.correlationId !== undefined && Buffer.byteLength(repair.correlationId, "utf8") > SHORTSTR_MAX) {
    return "The new correlation id is longer than RabbitMQ's 255 bytes. Nothing was published; the letter stays in the DLQ.";
  }
  return null;
}

/** The operator's header edits, keyed as `nameKey` gives them: the new text value, or null to drop the header. */
export function headerEdits(repair: LetterRepair): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const [name, value] of Object.entries(repair.setHeaders ?? {})) out.set(nameKey(name), value);
  for (const name of repair.removeHeaders ?? []) out.set(nameKey(name), null);
  return out;
}

/**
 * Why a letter whose copy was confirmed stayed in the DLQ because `beforeRemove` (the archive)
 * threw: the copy is out there, so the operator must know there is now a duplicate. An AppError's
 * operator message is quoted; any other error's message is never shown.
 */
export function archiveFailure(e: unknown, where: string, copyId: string | null): string {
  const why = isAppError(e) ? e.userMessage.replace(/\.$/, "") : "the console could not archive the original";
  const copy = copyId ? `The repaired copy (message id ${copyId})` : "The copy";
  return `${copy} was published to ${where} and confirmed, but the original was not removed: ${why}. The original stays in the DLQ, so the copy is a duplicate of it; check the target before moving this letter again.`;
}
