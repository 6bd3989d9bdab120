/**
 * What a repair may change. Pure: the use case brings the letter, the masking rules in
 * force for the actor's role and the broker's limits; these functions say which fields are locked,
 * whether an edit touches one, and turn the edited payload into the bytes that will be sent.
 *
 * Locked, whoever asks: broker-managed and provenance headers (x-death, x-first-death-*, Kafka DLT
 * origin headers, …) of every broker, whichever holds the letter now, and the console's own x-dlq-*
 * markers (`isManagedHeader`: the registry's union of every adapter's declaration, the same the
 * adapters refuse), and every broker property (AMQP properties, SQS system attributes, Kafka
 * key/partition/offset): those are not headers, and a repair can only set or remove headers.
 * Locked unless the request revealed the letter: headers, and the payload, that masking rules hide
 * from the role, since an edit made from the masked view would write the mask into the message, and
 * an edit of a value never seen answers for it ("unchanged" answered a right guess).
 */
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import { globMatch } from "@/lib/glob";
import { buildPayloadView } from "@/lib/letter/payload-view";
import { jsonSyntaxError } from "@/lib/repair/json-syntax";
import { maskHeadersWithRules, maskPayloadWithRules } from "@/lib/masking/engine";
import type { MaskingRule } from "@/lib/masking/types";
import { decodeUtf8, valueText } from "@/lib/text";

// The syntax check lives in its own browser-safe module (the editor checks as the admin types); re-exported for the server callers.
export { jsonSyntaxError };

/** How a payload can be edited: JSON in a JSON editor, text as text, anything else only replaced by a file. */
export type PayloadKind = "json" | "text" | "binary";

/** The new payload as the client sends it. */
export type BodyEdit = { kind: "json" | "text"; text: string } | { kind: "file"; base64: string };

export type LockReason = "managed" | "property" | "masked";

export interface LockedField {
  kind: "header" | "property" | "payload";
  /** Header or property name; "payload" for the payload. */
  name: string;
  reason: LockReason;
  /** Operator words: why it cannot be changed here. */
  message: string;
}

/** The masking rules in force for the actor's role on this DLQ (MaskingPolicy without the database). */
export interface RepairMasking {
  rules: MaskingRule[];
  hashKey: Uint8Array | string;
  /** The request revealed the letter (payload:reveal, audited): masked fields are then editable. */
  canReveal: boolean;
}

/** A repair edit as far as the policy is concerned. */
export interface RepairEdit {
  body?: BodyEdit;
  setHeaders?: Record<string, string>;
  removeHeaders?: string[];
}

/** One reason an edit is refused; `field` names what it touched. */
export interface EditProblem {
  field: string;
  message: string;
  /** For a JSON syntax error: where, 1-based. */
  line?: number;
  column?: number;
}

/** The config switch: a DLQ may be repaired only when some entry's globs match its connection and name. */
export function repairEnabled(
  scopes: ReadonlyArray<{ connection: string; queue: string }>,
  connectionId: string,
  queue: string,
): boolean {
  return scopes.some((s) => globMatch(s.connection, connectionId) && globMatch(s.queue, queue));
}

/** The payload's kind, decided as the letter page shows it (lib/letter/payload-view.ts): JSON, text, or hex (binary). */
export function payloadKindOf(bytes: Uint8Array, contentType: string | null): PayloadKind {
  // maxChars 1: only the kind is wanted, not the pretty-printed text.
  const kind = buildPayloadView(bytes, { maxChars: 1, maxHexBytes: 0, contentType }).kind;
  return kind === "hex" ? "binary" : kind;
}

const MANAGED_MESSAGE =
  "Managed by the broker or the console (history, provenance or a console marker); it travels unchanged.";
const PROPERTY_MESSAGE = "A broker property, not a header: it travels unchanged.";
const MASKED_HEADER_MESSAGE =
  "Hidden from your role by a masking rule: reveal the letter first (recorded in the audit log with your reason), then change it.";
const MASKED_PAYLOAD_MESSAGE =
  "Masking rules hide parts of this payload from your role: reveal it first (recorded in the audit log with your reason), then edit the real values.";

/** Names of headers whose value masking changes for this role. */
function maskedHeaderNames(headers: HeaderEntry[], m: RepairMasking): Set<string> {
  const out = new Set<string>();
  if (m.rules.length === 0) return out;
  const masked = maskHeadersWithRules(headers, m.rules, m.hashKey).entries;
  headers.forEach((h, i) => {
    if (valueText(masked[i].value) !== valueText(h.value)) out.add(h.name.toLowerCase());
  });
  return out;
}

/** True when masking rules change what this role is shown of the payload. */
export function payloadMaskedFor(
  body: Uint8Array,
  contentType: string | null,
  m: Pick<RepairMasking, "rules" | "hashKey">,
): boolean {
  if (m.rules.length === 0) return false;
  const r = maskPayloadWithRules(body, contentType, m.rules, m.hashKey);
  return r.kind !== "original" && r.maskedCount > 0;
}

/** Every field of the letter this actor may not change, with the reason. */
export function lockedFields(
  letter: { headers: HeaderEntry[]; properties: HeaderEntry[]; body: Uint8Array; contentType: string | null },
  m: RepairMasking,
): LockedField[] {
  const locked: LockedField[] = [];
  const masked = m.canReveal ? new Set<string>() : maskedHeaderNames(letter.headers, m);
  for (const h of letter.headers) {
    if (isManagedHeader(h.name))
      locked.push({ kind: "header", name: h.name, reason: "managed", message: MANAGED_MESSAGE });
    else if (masked.has(h.name.toLowerCase()))
      locked.push({ kind: "header", name: h.name, reason: "masked", message: MASKED_HEADER_MESSAGE });
  }
  for (const p of letter.properties)
    locked.push({ kind: "property", name: p.name, reason: "property", message: PROPERTY_MESSAGE });
  if (!m.canReveal && payloadMaskedFor(letter.body, letter.contentType, m)) {
    locked.push({ kind: "payload", name: "payload", reason: "masked", message: MASKED_PAYLOAD_MESSAGE });
  }
  return locked;
}

const MAX_HEADER_NAME = 255;
const MAX_HEADER_VALUE = 64 * 1024;

/**
 * The header edits' problems: a locked or unknown name, a name both set and removed, an oversized
 * name or value. Checked on the server whatever the client showed, so a crafted request is refused
 * the same way.
 */
export function headerEditProblems(headers: HeaderEntry[], locked: LockedField[], edit: RepairEdit): EditProblem[] {
  const problems: EditProblem[] = [];
  const lockedHeaders = new Map(locked.filter((l) => l.kind === "header").map((l) => [l.name.toLowerCase(), l]));
  const present = new Set(headers.map((h) => h.name));
  const set = Object.keys(edit.setHeaders ?? {});
  const removed = edit.removeHeaders ?? [];
  const check = (name: string, verb: string) => {
    const field = `header ${name}`;
    if (name.trim() === "" || name.length > MAX_HEADER_NAME) {
      problems.push({ field, message: `A header name must have 1 to ${MAX_HEADER_NAME} characters.` });
    } else if (isManagedHeader(name)) {
      problems.push({ field, message: `"${name}" cannot be ${verb}: ${MANAGED_MESSAGE}` });
    } else if (lockedHeaders.has(name.toLowerCase())) {
      problems.push({
        field,
        message: `"${name}" cannot be ${verb}: ${lockedHeaders.get(name.toLowerCase())!.message}`,
      });
    }
  };
  for (const name of set) {
    check(name, "set");
    if (edit.setHeaders![name].length > MAX_HEADER_VALUE)
      problems.push({
        field: `header ${name}`,
        message: `The value of "${name}" is longer than ${MAX_HEADER_VALUE} characters.`,
      });
  }
  for (const name of removed) {
    check(name, "removed");
    if (!present.has(name))
      problems.push({ field: `header ${name}`, message: `The letter has no header "${name}" to remove.` });
    if (set.includes(name))
      problems.push({ field: `header ${name}`, message: `"${name}" is both set and removed; choose one.` });
  }
  return problems;
}

/** Strict base64 (padding optional), so a truncated or mangled upload is refused rather than half decoded. */
function decodeBase64(b64: string): Uint8Array | null {
  const s = b64.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 === 1) return null;
  return new Uint8Array(Buffer.from(s, "base64"));
}

/** A UTF-16 surrogate without its pair: TextEncoder would silently turn it into U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const PLACEHOLDER = /\[hidden\]|\[hash:[0-9a-f]{12}\]/g;
const count = (s: string, re: RegExp) => s.match(re)?.length ?? 0;

export interface BodyLimits {
  /** capabilities.maxBodyBytes; null or absent: no limit worth stating. */
  maxBodyBytes?: number | null;
  /** capabilities.binaryBodies; false: the broker takes text only (SQS). */
  binaryBodies?: boolean;
}

/**
 * The bytes a body edit stands for, or why it is refused. JSON must parse (the error says where);
 * text is sent as UTF-8 and must be well formed (no lone surrogate); a binary payload can only be
 * replaced by a file, never edited as text. The result must fit the broker's limit.
 */
export function bodyBytes(
  original: { body: Uint8Array; contentType: string | null },
  edit: BodyEdit,
  limits: BodyLimits,
): { ok: true; bytes: Uint8Array } | { ok: false; problem: EditProblem } {
  const kind = payloadKindOf(original.body, original.contentType);
  const fail = (message: string, extra: Partial<EditProblem> = {}) => ({
    ok: false as const,
    problem: { field: "payload", message, ...extra },
  });
  let bytes: Uint8Array;
  if (edit.kind === "file") {
    const decoded = decodeBase64(edit.base64);
    if (!decoded) return fail("The uploaded file did not arrive whole (its base64 is not valid); upload it again.");
    if (limits.binaryBodies === false && decodeUtf8(decoded) === null)
      return fail("This broker only carries text payloads, and the file is not valid UTF-8 text.");
    bytes = decoded;
  } else {
    if (kind === "binary")
      return fail("This payload is binary: it can only be replaced by uploading a file, not edited as text.");
    if (edit.kind === "text" && kind === "json")
      return fail("This payload is JSON: edit it as JSON, or replace it by uploading a file.");
    if (LONE_SURROGATE.test(edit.text))
      return fail("The text holds a broken character (a lone surrogate) that cannot be sent as UTF-8.");
    if (edit.kind === "json") {
      const err = jsonSyntaxError(edit.text);
      if (err)
        return fail(`The JSON is not valid at line ${err.line}, column ${err.column}: ${err.message}.`, {
          line: err.line,
          column: err.column,
        });
    }
    bytes = new TextEncoder().encode(edit.text);
  }
  if (limits.maxBodyBytes != null && bytes.length > limits.maxBodyBytes) {
    return fail(`The new payload is ${bytes.length} bytes; this broker takes at most ${limits.maxBodyBytes}.`);
  }
  return { ok: true, bytes };
}

/**
 * A body that holds more masking placeholders ("[hidden]", "[hash:…]") than the original was most
 * likely edited from the masked view: sending it would overwrite real values with the mask.
 */
export function looksEditedFromMask(original: Uint8Array, next: Uint8Array): boolean {
  const before = decodeUtf8(original);
  const after = decodeUtf8(next);
  if (after === null) return false;
  return count(after, PLACEHOLDER) > count(before ?? "", PLACEHOLDER);
}
