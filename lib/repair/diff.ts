/**
 * What a repair changes, for the preview and the audit row: a structural diff of JSON
 * payloads (microdiff over values parsed by ./json-lossless, so 64-bit ids compare exactly), one
 * changed hunk for text, sizes for binary payloads, and the header edits. Values are masked with
 * the rules given: a masked field's old and new values appear only as the mask shows them (hidden,
 * last digits, keyed hash), so a change is visible without its content. Values are masked by where
 * they came from too: what a patch copied or moved from a masked value stays masked
 * (./masked-patch), and where no patch says (a whole payload or header edited by hand) a new value
 * that holds a value masking hides is hidden.
 */
import microdiff from "microdiff";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { maskHeadersWithRules, maskPayloadWithRules, maskTextWithRules } from "@/lib/masking/engine";
import type { MaskingRule } from "@/lib/masking/types";
import { HIDDEN } from "@/lib/masking/types";
import { decodeUtf8, valueText } from "@/lib/text";
import { parseLossless, type LosslessJson } from "./json-lossless";
import { maskedPatchDiff } from "./masked-patch";
import {
  cut,
  hiddenParts,
  hideSecrets,
  holdsSecret,
  MAX_DIFF_ENTRIES,
  MAX_VALUE_CHARS,
  maskedView,
  pointer,
  Secrets,
} from "./masked-view";
import type { HeaderDiffEntry, JsonDiffEntry, PayloadDiff, TextHunk } from "./diff-types";
import { patchBehind, type PayloadPatch } from "./patch";
import type { PayloadKind } from "./policy";

export { MAX_DIFF_ENTRIES, MAX_VALUE_CHARS };

/** Masking rules to apply to the diff's values; null or no rules: shown as they are. */
export interface DiffMasking {
  rules: MaskingRule[];
  hashKey: Uint8Array | string;
}

const MAX_HUNK_CHARS = 4000;
/** Deeper JSON is compared as text (microdiff recurses). */
const MAX_JSON_DEPTH = 64;

function at(root: unknown, path: Array<string | number>): { found: boolean; value: unknown } {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, p)) return { found: false, value: undefined };
    v = (v as Record<string | number, unknown>)[p];
  }
  return { found: true, value: v };
}

function tryParse(text: string | null): LosslessJson | null {
  if (text === null) return null;
  try {
    return parseLossless(text);
  } catch {
    return null;
  }
}

/** The document as the masking rules show it, parsed; null when the rules hide it whole. */
function maskedDoc(bytes: Uint8Array, mask: DiffMasking): LosslessJson | null {
  const m = maskPayloadWithRules(bytes, "application/json", mask.rules, mask.hashKey);
  if (m.kind === "original") return tryParse(decodeUtf8(bytes));
  return m.kind === "json" && !m.truncated ? tryParse(m.text) : null;
}

/**
 * The values `mask` hides in a payload (or its headers), for hiding them wherever a hand edit puts
 * them. JSON by its masked view; text by the stretches its masked rendition does not show.
 */
export function secretsOf(bytes: Uint8Array, kind: PayloadKind, mask: DiffMasking | null): Secrets {
  const out = new Secrets();
  if (!mask || mask.rules.length === 0 || kind === "binary") return out;
  if (kind === "json") {
    const v = maskedView(bytes, mask);
    if (v.ok) return v.view.secrets;
  }
  const text = decodeUtf8(bytes);
  if (text === null) return out;
  for (const part of hiddenParts(text, maskTextWithRules(text, mask.rules, mask.hashKey).text)) out.add(part);
  return out;
}

/** The values header rules and detectors hide in these headers. */
export function headerSecrets(headers: HeaderEntry[], mask: DiffMasking | null): Secrets {
  const out = new Secrets();
  if (!mask || mask.rules.length === 0) return out;
  const masked = maskHeadersWithRules(headers, mask.rules, mask.hashKey).entries;
  headers.forEach((h, i) => {
    for (const part of hiddenParts(valueText(h.value), valueText(masked[i].value))) out.add(part);
  });
  return out;
}

/**
 * A structural diff of two JSON texts; null when either is not JSON or is nested too deep to
 * compare. With `secrets`, a new value holding one of them is hidden (a hand edit that copied it).
 */
export function jsonDiff(
  beforeBytes: Uint8Array,
  afterBytes: Uint8Array,
  mask: DiffMasking | null = null,
  secrets: Secrets | null = null,
): { entries: JsonDiffEntry[]; truncated: boolean } | null {
  const before = tryParse(decodeUtf8(beforeBytes));
  const after = tryParse(decodeUtf8(afterBytes));
  if (!before || !after || before.depth > MAX_JSON_DEPTH || after.depth > MAX_JSON_DEPTH) return null;
  // Wrapped, so that a changed root (another type, or a scalar payload) is one entry at "".
  const changes = microdiff(
    { r: before.value } as Record<string, unknown>,
    { r: after.value } as Record<string, unknown>,
  );
  const masking = mask && mask.rules.length > 0;
  const mb = masking ? maskedDoc(beforeBytes, mask) : null;
  const ma = masking ? maskedDoc(afterBytes, mask) : null;
  /** The value to show: the masked document's value at the same place when the rules changed it. */
  const show = (
    doc: LosslessJson,
    maskedDocument: LosslessJson | null,
    path: Array<string | number>,
    value: unknown,
  ) => {
    const text = doc.stringify(value);
    if (!masking) return { text: cut(text, MAX_VALUE_CHARS), masked: false };
    const m = maskedDocument ? at({ r: maskedDocument.value }, ["r", ...path]) : { found: false, value: undefined };
    const maskedText = m.found ? maskedDocument!.stringify(m.value) : JSON.stringify(HIDDEN);
    return { text: cut(maskedText, MAX_VALUE_CHARS), masked: maskedText !== text };
  };
  const entries: JsonDiffEntry[] = [];
  for (const c of changes.slice(0, MAX_DIFF_ENTRIES)) {
    const path = c.path.slice(1);
    const e: JsonDiffEntry = {
      op: c.type === "CREATE" ? "add" : c.type === "REMOVE" ? "remove" : "change",
      path: pointer(path),
    };
    if (c.type !== "CREATE") {
      const b = show(before, mb, path, c.oldValue);
      e.before = b.text;
      if (b.masked) e.masked = true;
    }
    if (c.type !== "REMOVE") {
      const a = show(after, ma, path, c.value);
      const copied = masking && secrets !== null && holdsSecret(c.value, secrets, after.numberToken);
      e.after = copied ? JSON.stringify(HIDDEN) : a.text;
      if (a.masked || copied) e.masked = true;
    }
    entries.push(e);
  }
  return { entries, truncated: changes.length > MAX_DIFF_ENTRIES };
}

/** The one changed stretch of lines between two texts (equal leading and trailing lines left out). */
export function textHunk(before: string, after: string): TextHunk | null {
  if (before === after) return null;
  const b = before.split("\n");
  const a = after.split("\n");
  let head = 0;
  while (head < b.length && head < a.length && b[head] === a[head]) head++;
  let tail = 0;
  while (tail < b.length - head && tail < a.length - head && b[b.length - 1 - tail] === a[a.length - 1 - tail]) tail++;
  return {
    line: head + 1,
    before: cut(b.slice(head, b.length - tail).join("\n"), MAX_HUNK_CHARS),
    after: cut(a.slice(head, a.length - tail).join("\n"), MAX_HUNK_CHARS),
  };
}

/**
 * The payload's diff. `after` null: the body is kept byte for byte. JSON is compared structurally;
 * text by its changed lines (masked as text); binary, or a change of kind, by sizes only. Bytes a
 * patch produced (or `opts.patch`) are diffed as the patch moved values, masked by where they came
 * from. A hand edit says nothing of where its values came from: with `opts.secrets` (the values
 * the rules hide, see secretsOf), a new value holding one is hidden. Give them only when the actor
 * revealed the letter: otherwise a value typed in is a guess, and hiding it only when it is right
 * would answer the guess.
 */
export function payloadDiff(
  before: Uint8Array,
  after: Uint8Array | null,
  kind: PayloadKind,
  mask: DiffMasking | null = null,
  opts: { patch?: PayloadPatch; secrets?: Secrets } = {},
): PayloadDiff {
  if (after === null || Buffer.from(before).equals(Buffer.from(after)))
    return { kind: "unchanged", size: before.length };
  const masking = mask !== null && mask.rules.length > 0;
  if (kind === "json" && masking) {
    const made = opts.patch ? { before, patch: opts.patch } : patchBehind(after);
    if (made && (made.before === before || Buffer.from(made.before).equals(Buffer.from(before))))
      return maskedPatchDiff(before, made.patch, mask);
  }
  const secrets = masking ? (opts.secrets ?? null) : null;
  if (kind === "json") {
    const d = jsonDiff(before, after, mask, secrets);
    if (d) return { kind: "json", ...d };
  }
  const bt = kind === "binary" ? null : decodeUtf8(before);
  const at2 = bt === null ? null : decodeUtf8(after);
  if (bt === null || at2 === null) return { kind: "binary", beforeSize: before.length, afterSize: after.length };
  const hunk = textHunk(bt, at2);
  if (!hunk || !mask || mask.rules.length === 0) return { kind: "text", hunk, masked: false };
  // Masked as whole texts first, so a value split over the hunk's edge is still recognised.
  const mb = maskTextWithRules(hunk.before, mask.rules, mask.hashKey);
  const ma = maskTextWithRules(hunk.after, mask.rules, mask.hashKey);
  const shownBefore = secrets ? hideSecrets(mb.text, secrets) : mb.text;
  const shownAfter = secrets ? hideSecrets(ma.text, secrets) : ma.text;
  return {
    kind: "text",
    hunk: { ...hunk, before: shownBefore, after: shownAfter },
    masked: mb.maskedCount + ma.maskedCount > 0 || shownBefore !== mb.text || shownAfter !== ma.text,
  };
}

/**
 * The header edits as entries, values masked by header rules and detectors; with `secrets` (given
 * only after a reveal, as for payloadDiff), a value that holds one of them is hidden.
 */
export function headerDiff(
  headers: HeaderEntry[],
  edit: { setHeaders?: Record<string, string>; removeHeaders?: string[] },
  mask: DiffMasking | null = null,
  secrets: Secrets | null = null,
): HeaderDiffEntry[] {
  const rules = mask?.rules ?? [];
  const hidden = rules.length > 0 ? secrets : null;
  const shown = (name: string, value: HeaderEntry["value"]) => {
    const raw = valueText(value);
    if (rules.length === 0) return { text: cut(raw, MAX_VALUE_CHARS), masked: false };
    const m = valueText(maskHeadersWithRules([{ name, value }], rules, mask!.hashKey).entries[0].value);
    const text = hidden ? hideSecrets(m, hidden) : m;
    return { text: cut(text, MAX_VALUE_CHARS), masked: text !== raw };
  };
  const byName = new Map(headers.map((h) => [h.name, h]));
  const out: HeaderDiffEntry[] = [];
  for (const [name, v] of Object.entries(edit.setHeaders ?? {})) {
    const old = byName.get(name);
    const after = shown(name, { t: "string", v });
    if (!old) {
      out.push({ name, op: "add", after: after.text, ...(after.masked ? { masked: true } : {}) });
      continue;
    }
    if (old.value.t === "string" && old.value.v === v) continue;
    const before = shown(name, old.value);
    out.push({
      name,
      op: "change",
      before: before.text,
      after: after.text,
      ...(before.masked || after.masked ? { masked: true } : {}),
    });
  }
  for (const name of edit.removeHeaders ?? []) {
    const old = byName.get(name);
    if (!old) continue;
    const before = shown(name, old.value);
    out.push({ name, op: "remove", before: before.text, ...(before.masked ? { masked: true } : {}) });
  }
  return out.slice(0, MAX_DIFF_ENTRIES);
}
export { applyPatch, mergePatch, type PayloadPatch, type PatchOutcome } from "./patch";
