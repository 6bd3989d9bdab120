/**
 * A JSON payload as a role sees it, for working out what a repair does without learning what
 * masking hides. The document is the masked rendition, with every value the rules
 * changed replaced by a sentinel that stands for it: a patch applied to this document answers only
 * from what the role already sees, and a sentinel copied or moved by the patch is still a sentinel
 * where it lands, so its value stays masked by where it came from. Numbers keep their exact tokens
 * (./json-lossless), under one tag for every document of a call so they compare across documents.
 */
import { randomBytes } from "node:crypto";
import { maskPayloadWithRules } from "@/lib/masking/engine";
import { HIDDEN, type MaskingRule } from "@/lib/masking/types";
import { decodeUtf8 } from "@/lib/text";
import { parseLossless, type LosslessJson } from "./json-lossless";

export const MAX_DIFF_ENTRIES = 200;
export const MAX_VALUE_CHARS = 500;

export const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

export type Segment = string | number;

/** JSON Pointer (RFC 6901) of a path. */
export const pointer = (path: Segment[]) =>
  path.map((p) => `/${String(p).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");

/** A JSON Pointer's reference tokens, unescaped. */
export const segmentsOf = (ptr: string): string[] =>
  ptr === ""
    ? []
    : ptr
        .split("/")
        .slice(1)
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));

/** The rules a view is masked with (MaskingPolicy or the audit readers' union). */
export interface ViewMasking {
  rules: MaskingRule[];
  hashKey: Uint8Array | string;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Own-property write: a "__proto__" key is data, never the object's prototype. */
export function put(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** Exact number tokens under one tag per call, so values parsed from different documents compare. */
export class NumberTokens {
  private readonly tag = `\u0000num:${randomBytes(6).toString("hex")}:`;
  private readonly restore: RegExp;

  constructor() {
    const escaped = JSON.stringify(this.tag).slice(1, -1);
    this.restore = new RegExp(`"${escaped.replace(/\\/g, "\\\\")}([^"]+)"`, "g");
  }

  /** `value` (parsed by `doc`) with its numbers under this call's tag. */
  adopt(doc: LosslessJson, value: unknown): unknown {
    const walk = (v: unknown): unknown => {
      if (typeof v === "string") {
        const token = doc.numberToken(v);
        return token === null ? v : `${this.tag}${token}`;
      }
      if (Array.isArray(v)) return v.map(walk);
      if (isPlainObject(v)) {
        const out: Record<string, unknown> = {};
        for (const k of Object.keys(v)) put(out, k, walk(v[k]));
        return out;
      }
      return v;
    };
    return walk(value);
  }

  /** JSON text of a value, numbers as they were written. */
  stringify(value: unknown, indent?: string | number): string {
    return (JSON.stringify(value, null, indent) ?? "null").replace(this.restore, "$1");
  }

  /** The number's token when `v` is a tagged number. */
  tokenOf(v: unknown): string | null {
    return typeof v === "string" && v.startsWith(this.tag) ? v.slice(this.tag.length) : null;
  }
}

/** Placeholders the masking actions leave ("[hidden]", "****1234"'s stars, "[hash:…]"). */
const PLACEHOLDER = /\[hidden\]|\*{4}|\[hash:[0-9a-f]{12}\]/;

/**
 * The stretches of `real` that its masked rendition does not show: the text between the visible
 * fragments the rendition kept (the last digits of "****1234", the words around a masked card).
 */
export function hiddenParts(real: string, masked: string): string[] {
  if (real === masked) return [];
  const fragments = masked.split(PLACEHOLDER);
  if (fragments.length === 1) return [real];
  const out: string[] = [];
  let at = 0;
  let end = real.length;
  const first = fragments[0];
  const last = fragments[fragments.length - 1];
  if (first && real.startsWith(first)) at = first.length;
  if (last && fragments.length > 1 && real.endsWith(last) && real.length - last.length >= at) end -= last.length;
  for (const f of fragments.slice(1, -1)) {
    if (!f) continue;
    const i = real.indexOf(f, at);
    if (i < 0 || i + f.length > end) continue;
    if (i > at) out.push(real.slice(at, i));
    at = i + f.length;
  }
  if (end > at) out.push(real.slice(at, end));
  return out;
}

/** At most this many hidden values are remembered per letter; past it every value a repair writes is hidden. */
const MAX_SECRETS = 1000;

/** Hidden values, for masking what a whole-payload edit writes by value (no patch says where it came from). */
export class Secrets {
  readonly list: string[] = [];
  overflow = false;

  add(s: string) {
    if (!s) return;
    if (this.list.length >= MAX_SECRETS) this.overflow = true;
    else this.list.push(s);
  }

  absorb(other: Secrets) {
    for (const s of other.list) this.add(s);
    if (other.overflow) this.overflow = true;
  }

  /** True when `text` is or holds a hidden value (short values only when equal: "7" is in too much). */
  heldBy(text: string): boolean {
    if (this.overflow) return true;
    return this.list.some((s) => (s.length < 3 ? text === s : text.includes(s)));
  }
}

export interface MaskedView {
  /** The masked rendition with a sentinel for every value the rules changed (mutable by a patch: clone first). */
  doc: unknown;
  /** Pointer paths of the sentinels in `doc`. */
  maskedPaths: Segment[][];
  /** The real values masking hides, for value provenance. */
  secrets: Secrets;
  tokens: NumberTokens;
  isSentinel(v: unknown): boolean;
  containsSentinel(v: unknown): boolean;
  /** What a sentinel shows (its masked rendition). */
  shownOf(sentinel: unknown): unknown;
  /** `v` with each sentinel replaced by what it shows. */
  render(v: unknown): unknown;
}

export type ViewResult = { ok: true; view: MaskedView } | { ok: false; reason: string };

export const NOT_UTF8 = "The payload is not UTF-8 text, so a JSON patch cannot apply to it.";
export const NOT_JSON = "The payload is not JSON, so a JSON patch cannot apply to it.";

function makeView(tokens: NumberTokens): MaskedView & { sentinel(shown: unknown, path: Segment[]): unknown } {
  const key = `\u0000masked:${randomBytes(6).toString("hex")}`;
  const shown: unknown[] = [];
  const isSentinel = (v: unknown) => isPlainObject(v) && Object.hasOwn(v, key);
  const containsSentinel = (v: unknown): boolean => {
    if (isSentinel(v)) return true;
    if (Array.isArray(v)) return v.some(containsSentinel);
    if (isPlainObject(v)) return Object.keys(v).some((k) => containsSentinel(v[k]));
    return false;
  };
  const shownOf = (v: unknown) => shown[(v as Record<string, number>)[key]];
  const render = (v: unknown): unknown => {
    if (isSentinel(v)) return shownOf(v);
    if (Array.isArray(v)) return v.map(render);
    if (isPlainObject(v)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) put(out, k, render(v[k]));
      return out;
    }
    return v;
  };
  const view = {
    doc: null as unknown,
    maskedPaths: [] as Segment[][],
    secrets: new Secrets(),
    tokens,
    isSentinel,
    containsSentinel,
    shownOf,
    render,
    sentinel(value: unknown, path: Segment[]) {
      view.maskedPaths.push(path);
      shown.push(value);
      return { [key]: shown.length - 1 };
    },
  };
  return view;
}

/** Every leaf's text (strings, number tokens) and every key under a value, for the secrets it holds. */
function addLeaves(secrets: Secrets, doc: LosslessJson, v: unknown) {
  if (Array.isArray(v)) for (const x of v) addLeaves(secrets, doc, x);
  else if (isPlainObject(v))
    for (const k of Object.keys(v)) {
      secrets.add(k);
      addLeaves(secrets, doc, v[k]);
    }
  else if (typeof v === "string") secrets.add(doc.numberToken(v) ?? v);
  else if (typeof v === "number") secrets.add(String(v));
}

const leafText = (doc: LosslessJson, v: unknown): string =>
  typeof v === "string" ? (doc.numberToken(v) ?? v) : doc.stringify(v);

/**
 * The payload as `mask` shows it, with sentinels where the rules changed a value (a whole value
 * hidden, a string partly masked, a key a detector masked). With no rules, the payload as it is.
 * A payload the engine hides whole (past its bounds) is one sentinel.
 */
export function maskedView(before: Uint8Array, mask: ViewMasking | null, tokens = new NumberTokens()): ViewResult {
  const text = decodeUtf8(before);
  if (text === null) return { ok: false, reason: NOT_UTF8 };
  let real: LosslessJson;
  try {
    real = parseLossless(text);
  } catch {
    return { ok: false, reason: NOT_JSON };
  }
  const view = makeView(tokens);
  const m =
    mask && mask.rules.length > 0
      ? maskPayloadWithRules(before, "application/json", mask.rules, mask.hashKey, {
          maxChars: text.length * 32 + 4096,
        })
      : null;
  if (!m || m.kind === "original") {
    view.doc = tokens.adopt(real, real.value);
    return { ok: true, view };
  }
  if (m.kind !== "json" || m.truncated || m.text === null) {
    addLeaves(view.secrets, real, real.value);
    view.doc = view.sentinel(HIDDEN, []);
    return { ok: true, view };
  }
  const shown = parseLossless(m.text);
  const hide = (r: unknown, s: unknown, path: Segment[]) => {
    if (typeof r === "string" || typeof r === "number") {
      const sText = typeof s === "string" ? (shown.numberToken(s) ?? s) : shown.stringify(s);
      for (const part of hiddenParts(leafText(real, r), sText)) view.secrets.add(part);
    } else addLeaves(view.secrets, real, r);
    return view.sentinel(tokens.adopt(shown, s), path);
  };
  const walk = (r: unknown, s: unknown, path: Segment[]): unknown => {
    if (Array.isArray(r) && Array.isArray(s)) {
      if (r.length !== s.length) return hide(r, s, path);
      return s.map((x, i) => walk(r[i], x, [...path, i]));
    }
    if (isPlainObject(r) && isPlainObject(s)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(s)) {
        if (Object.hasOwn(r, k)) put(out, k, walk(r[k], s[k], [...path, k]));
        else put(out, k, view.sentinel(tokens.adopt(shown, s[k]), [...path, k]));
      }
      // Keys the rules masked: the real names are what is hidden.
      for (const k of Object.keys(r)) if (!Object.hasOwn(s, k)) view.secrets.add(k);
      return out;
    }
    if (real.stringify(r) === shown.stringify(s)) return tokens.adopt(shown, s);
    return hide(r, s, path);
  };
  view.doc = walk(real.value, shown.value, []);
  return { ok: true, view };
}

/** True when `path` is at, under or above one of `paths` (a change there shows or overwrites it). */
export function touches(path: Segment[], paths: Segment[][]): boolean {
  return paths.some((p) => {
    const n = Math.min(p.length, path.length);
    for (let i = 0; i < n; i++) if (String(p[i]) !== String(path[i])) return false;
    return true;
  });
}

/** True when a value (any leaf or key of it) holds one of the secrets; `tokenOf` reads a tagged number. */
export function holdsSecret(v: unknown, secrets: Secrets, tokenOf: (v: unknown) => string | null): boolean {
  if (secrets.overflow) return true;
  if (secrets.list.length === 0) return false;
  if (Array.isArray(v)) return v.some((x) => holdsSecret(x, secrets, tokenOf));
  if (isPlainObject(v)) return Object.keys(v).some((k) => secrets.heldBy(k) || holdsSecret(v[k], secrets, tokenOf));
  if (typeof v === "string") return secrets.heldBy(tokenOf(v) ?? v);
  if (v === null || v === undefined) return false;
  return secrets.heldBy(String(v));
}

/** Each secret in `text` replaced by the hidden placeholder (short ones only when they are the whole text). */
export function hideSecrets(text: string, secrets: Secrets): string {
  if (secrets.overflow) return HIDDEN;
  let out = text;
  for (const s of [...secrets.list].sort((a, b) => b.length - a.length)) {
    if (s.length < 3) {
      if (out === s) return HIDDEN;
    } else out = out.split(s).join(HIDDEN);
  }
  return out;
}
