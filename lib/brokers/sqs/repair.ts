/**
 * Repair and resubmit on SQS: what a repaired copy is made of. Pure (no client); the
 * mover sends it and then archives and deletes the original (mover.ts).
 *
 * On SQS the headers of a letter are its message attributes. A repair:
 * - replaces the body when it gives one. SQS bodies are Unicode text, so the new bytes must be
 *   valid UTF-8 of characters SQS accepts (#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD |
 *   #x10000-#x10FFFF), and not empty; else the letter is "failed" and nothing is sent. They are
 *   never re-encoded to fit. Without a new body the received text is sent as it is.
 * - sets `setHeaders` as String attributes (an attribute of that name, whatever its type, is
 *   replaced) and drops `removeHeaders`; every other attribute keeps its value and data type.
 * - never names an SQS system attribute (SentTimestamp, AWSTraceHeader, MessageGroupId ...): SQS sets
 *   them, and AWSTraceHeader travels unchanged. A message attribute that happens to share such a
 *   name is the letter's own and may be edited. Names the console or any broker manages (the
 *   adapter's union of every declaration: the x-dlq-* markers, x-death, kafka_dlt-* of a letter
 *   bridged from elsewhere; SQS declares none of its own, managed-headers.ts) are refused as well,
 *   by move-rules' repairRefusal with SQS's own rules (`SQS_REPAIR_RULES`), worded as on every broker.
 * - correlationId: SQS has no correlation property. The console reads a letter's correlation id from
 *   the attributes `correlationId`, `correlation-id` or `correlation_id` (letter.ts), so a new one is
 *   written to each of those the letter has (as a String), and to a new `correlation-id` attribute
 *   when it has none, so that the copy reads back with the id the operator asked for.
 * - stays within SQS's 10 message attributes, counting the markers (see markers.ts): at least one
 *   attribute must be left for them, else "failed" with the count.
 */
import type { Message, MessageAttributeValue } from "@aws-sdk/client-sqs";
import type { ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { LetterRepair } from "@/lib/brokers/contract/move";
import { repairRefusal, type RepairRules } from "@/lib/brokers/move-rules";
import { isValidUtf8 } from "@/lib/brokers/display";
import { SQS_MAX_MESSAGE_ATTRIBUTES, isMarkerAttribute } from "@/lib/brokers/sqs/markers";
import { SYSTEM_ORDER } from "@/lib/brokers/sqs/letter";

// What SQS accepts in a body or a String attribute value.
const SQS_FORBIDDEN = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Names SQS itself gives a message (system attributes and the receive fields the console shows as properties). */
export const SQS_SYSTEM_NAMES = new Set([
  "MessageId",
  "ReceiptHandle",
  "MD5OfBody",
  "MD5OfMessageAttributes",
  ...SYSTEM_ORDER,
]);

/** The correlation attributes the reader recognises (letter.ts), in its order. */
export const CORRELATION_ATTRIBUTES = ["correlationId", "correlation-id", "correlation_id"] as const;
const NEW_CORRELATION_ATTRIBUTE = "correlation-id";

const quote = (s: string) => `"${s.length > 80 ? `${s.slice(0, 80)}…` : s}"`;
/** Worded as move-rules' repairRefusal words a refusal. */
const refused = (why: string) => `Not repaired: ${why}. Nothing was published; the letter stays in the DLQ.`;

/** Why SQS would refuse this as a message attribute name, or null (SQS's naming rules). */
export function attributeNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > 256)
    return `the attribute name ${quote(name)} must be 1 to 256 characters long`;
  if (!/^[A-Za-z0-9_.-]+$/.test(name))
    return `the attribute name ${quote(name)} may hold only letters, digits, hyphens, underscores and periods (an SQS rule)`;
  if (name.startsWith(".") || name.endsWith(".") || name.includes(".."))
    return `the attribute name ${quote(name)} may not start or end with a period or hold two in a row (an SQS rule)`;
  if (/^(aws|amazon)\./i.test(name))
    return `the attribute name ${quote(name)} starts with a prefix SQS reserves for AWS`;
  return null;
}

/** Why SQS would refuse this text as a body or String value, or null. */
function textProblem(s: string, what: string): string | null {
  if (s.length === 0) return `${what} is empty, and SQS needs at least one character`;
  if (SQS_FORBIDDEN.test(s))
    return `${what} holds characters SQS refuses (control characters other than tab, line feed and carriage return, or unpaired surrogates)`;
  return null;
}

/** The new body as the SQS string it must be, or why it cannot be one (unworded). */
function bodyText(body: Uint8Array): { text: string } | { problem: string } {
  // Not TextDecoder's default: it drops a leading byte order mark, and the body must stay byte-exact.
  if (!isValidUtf8(body))
    return {
      problem:
        "the new payload is not valid UTF-8 text, and SQS message bodies are Unicode text (binary payloads cannot be sent to SQS)",
    };
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  const problem = textProblem(text, "the new payload");
  return problem ? { problem } : { text };
}

/** The new body as the SQS string it must be, or why it cannot be one. */
export function repairedBodyText(body: Uint8Array): { text: string } | { reason: string } {
  const b = bodyText(body);
  return "problem" in b ? { reason: refused(b.problem) } : b;
}

/** SQS's own limits on a repair, for move-rules' repairRefusal (managed names are refused there). */
export const SQS_REPAIR_RULES: RepairRules = {
  noun: "message attribute",
  managedBy: "the broker or the console (dead-letter history and the x-dlq-* markers)",
  dlq: "DLQ",
  nameProblem: (name) => {
    const p = attributeNameProblem(name);
    return p ? `Not repaired: ${p}.` : null;
  },
  otherProblem: (repair) => {
    const p = otherProblem(repair);
    return p ? `Not repaired: ${p}.` : null;
  },
};

/** Why SQS would refuse the values, correlation id or body of this repair, or null. */
function otherProblem(repair: LetterRepair): string | null {
  if (typeof repair.operationId !== "string" || repair.operationId.length === 0)
    return "the repair has no operation id";
  const removed = repair.removeHeaders ?? [];
  for (const [name, value] of Object.entries(repair.setHeaders ?? {})) {
    const problem =
      typeof value === "string"
        ? textProblem(value, `the new value of ${quote(name)}`)
        : `the new value of ${quote(name)} is not text`;
    if (problem) return problem;
  }
  if (repair.correlationId !== undefined) {
    const problem =
      typeof repair.correlationId === "string"
        ? textProblem(repair.correlationId, "the new correlation id")
        : "the new correlation id is not text";
    if (problem) return problem;
    const clash = removed.find((n) => (CORRELATION_ATTRIBUTES as readonly string[]).includes(n));
    if (clash) return `a new correlation id was asked for while its attribute ${quote(clash)} is removed`;
    const differs = Object.entries(repair.setHeaders ?? {}).find(
      ([n, v]) => (CORRELATION_ATTRIBUTES as readonly string[]).includes(n) && v !== repair.correlationId,
    );
    if (differs) return `${quote(differs[0])} is set to a value other than the new correlation id`;
  }
  if (repair.body !== undefined) {
    const b = bodyText(repair.body);
    if ("problem" in b) return b.problem;
  }
  return null;
}

/**
 * Why this repair cannot be applied to any letter (names the console or broker manages, SQS's
 * naming rules, values SQS refuses, a name both set and removed, the new body), in move-rules'
 * words; null when it can be tried. `isManaged`: every broker's and the console's managed names.
 */
export function sqsRepairRefusal(repair: LetterRepair, isManaged: ManagedHeaderMatcher): string | null {
  return repairRefusal(repair, SQS_REPAIR_RULES, isManaged);
}

/**
 * The letter's message attributes after the repair (markers not yet added: markers.ts replaces
 * them), or why the repair cannot be applied to this letter.
 */
export function repairedAttributes(
  msg: Message,
  repair: LetterRepair,
): { attributes: Record<string, MessageAttributeValue> } | { reason: string } {
  const own = msg.MessageAttributes ?? {};
  for (const name of [...Object.keys(repair.setHeaders ?? {}), ...(repair.removeHeaders ?? [])]) {
    if (SQS_SYSTEM_NAMES.has(name) && !(name in own))
      return {
        reason: refused(
          `${quote(name)} is an SQS system attribute: SQS sets it on every message and it cannot be edited`,
        ),
      };
  }
  const out: Record<string, MessageAttributeValue> = { ...own };
  for (const name of repair.removeHeaders ?? []) delete out[name];
  for (const [name, value] of Object.entries(repair.setHeaders ?? {}))
    out[name] = { DataType: "String", StringValue: value };
  if (repair.correlationId !== undefined) {
    const present = CORRELATION_ATTRIBUTES.filter((n) => n in out);
    for (const name of present.length ? present : [NEW_CORRELATION_ATTRIBUTE])
      out[name] = { DataType: "String", StringValue: repair.correlationId };
  }
  const ownCount = Object.keys(out).filter((n) => !isMarkerAttribute(n)).length;
  if (ownCount + 1 > SQS_MAX_MESSAGE_ATTRIBUTES) {
    return {
      reason: refused(
        `after the repair the letter would carry ${ownCount} message attributes of its own, and SQS allows ${SQS_MAX_MESSAGE_ATTRIBUTES} in all, the console's markers included (at least one is needed for them). Remove ${ownCount + 1 - SQS_MAX_MESSAGE_ATTRIBUTES} more in the repair`,
      ),
    };
  }
  return { attributes: out };
}
