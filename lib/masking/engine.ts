import { createHmac } from "node:crypto";
import type { Role } from "@/lib/auth/permissions";
import type { DisplayValue, HeaderEntry } from "@/lib/brokers/types";
import { valueText } from "@/lib/dlq/display-value";
import { decodeUtf8, looksLikeText } from "@/lib/dlq/payload-view";
import { detect, type Span } from "./detectors";
import { globMatch } from "./glob";
import { compactJson, JsonLimitError, parseJson, stringifyJson, type JNode } from "./json";
import { HIDDEN, parseFieldPath, type FieldPath, type MaskAction, type MaskContext, type MaskingRule } from "./types";

/**
 * The masking engine: pure functions from (bytes or headers, rules, role) to what that role may
 * see. JSON is parsed, masked structurally and re-serialised for display only; stored and
 * redriven bytes are never touched. Anything the engine cannot mask with certainty (binary, JSON
 * past its bounds) is hidden rather than shown.
 */

export interface MaskedPayload {
  /** "original": no rule applies to this role, `bytes` are the input; otherwise `text` is what may be shown. */
  kind: "original" | "json" | "text" | "hidden";
  bytes: Uint8Array | null;
  text: string | null;
  maskedCount: number;
  /** The input was a prefix of the payload, or the output was cut at maxChars. */
  truncated: boolean;
}

export interface MaskPayloadOptions {
  /** The bytes are a prefix of the payload. */
  truncated?: boolean;
  maxChars?: number;
  maxDepth?: number;
  maxNodes?: number;
}

const LIMITS = { maxChars: 300_000, maxDepth: 64, maxNodes: 200_000 };

/** The enabled rules that apply to `role`. */
export function rulesFor(rules: MaskingRule[], role: Role): MaskingRule[] {
  return rules.filter((r) => r.enabled && r.roles.includes(role));
}

/**
 * On a sensitive DLQ every enabled rule applies to every role, and for viewers every action is
 * "hide" (no last digits, no hashes to compare).
 */
export function sensitiveRules(rules: MaskingRule[], role: Role): MaskingRule[] {
  return rules
    .filter((r) => r.enabled)
    .map((r) => ({ ...r, roles: [role], action: role === "viewer" ? { kind: "hide" as const } : r.action }));
}

export function applyAction(value: string, action: MaskAction, hashKey: Uint8Array | string): string {
  switch (action.kind) {
    case "hide":
      return HIDDEN;
    case "keep-last":
      // Too short to keep anything without giving most of it away.
      return value.length < action.n + 4 ? HIDDEN : `****${value.slice(-action.n)}`;
    case "hash":
      return `[hash:${createHmac("sha256", hashKey).update(value, "utf8").digest("hex").slice(0, 12)}]`;
  }
}

interface Compiled {
  rules: MaskingRule[];
  fields: Array<{ path: FieldPath; rule: MaskingRule }>;
  headers: Array<{ glob: string; rule: MaskingRule }>;
  detectors: MaskingRule[];
  hashKey: Uint8Array | string;
}

const pathCache = new Map<string, FieldPath | null>();
function fieldPath(p: string): FieldPath | null {
  if (!pathCache.has(p)) {
    let parsed: FieldPath | null = null;
    try {
      parsed = parseFieldPath(p);
    } catch {
      parsed = null;
    }
    if (pathCache.size > 5000) pathCache.clear();
    pathCache.set(p, parsed);
  }
  return pathCache.get(p)!;
}

function compile(ctx: MaskContext, preFiltered = false): Compiled {
  const rules = preFiltered ? ctx.rules : rulesFor(ctx.rules, ctx.role);
  const c: Compiled = { rules, fields: [], headers: [], detectors: [], hashKey: ctx.hashKey };
  for (const rule of rules) {
    const t = rule.target;
    if (t.kind === "field") for (const p of t.paths) {
      const path = fieldPath(p);
      if (path) c.fields.push({ path, rule });
    }
    else if (t.kind === "header") for (const glob of t.names) c.headers.push({ glob, rule });
    else c.detectors.push(rule);
  }
  return c;
}

type Seg = string | number;

function segMatches(seg: FieldPath["segments"][number], actual: Seg): boolean {
  if ("index" in seg) return typeof actual === "number" && (seg.index === "*" || seg.index === actual);
  if (seg.key === "*") return true;
  return typeof actual === "string" && globMatch(seg.key, actual);
}

function pathMatches(p: FieldPath, path: Seg[]): boolean {
  const segs = p.segments;
  if (p.anchored ? segs.length !== path.length : segs.length > path.length) return false;
  const off = path.length - segs.length;
  for (let k = 0; k < segs.length; k++) if (!segMatches(segs[k], path[off + k])) return false;
  return true;
}

function fieldRuleFor(c: Compiled, path: Seg[]): MaskingRule | null {
  for (const f of c.fields) if (pathMatches(f.path, path)) return f.rule;
  return null;
}

/** Field rules whose last segment is a key name, used to find `"key": value` / `key=value` in text. */
function keyRuleFor(c: Compiled, key: string): MaskingRule | null {
  for (const f of c.fields) {
    const last = f.path.segments[f.path.segments.length - 1];
    if ("key" in last && last.key !== "*" && globMatch(last.key, key)) return f.rule;
  }
  return null;
}

interface RuleSpan extends Span {
  rule: MaskingRule;
}

const JSONISH_KV = /"((?:[^"\\\n]|\\.){1,200})"\s*:\s*("(?:[^"\\]|\\.)*"?|[^\s,}\]]{1,400})/g;
const PLAIN_KV = /(?<![\w"'-])([A-Za-z_][\w.-]{0,100})\s{0,3}[=:]\s{0,3}("[^"\n]{0,400}"?|'[^'\n]{0,400}'?|[^\s&,;"'{}[\]]{1,400})/g;

/** Masks secrets in free text (and in JSON that could not be parsed, e.g. a cut prefix). */
function maskTextWith(c: Compiled, text: string, withKeys = true): { text: string; count: number } {
  if (!text || (c.detectors.length === 0 && c.fields.length === 0)) return { text, count: 0 };
  const spans: RuleSpan[] = [];
  if (withKeys && c.fields.length) {
    for (const re of [JSONISH_KV, PLAIN_KV]) {
      re.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = re.exec(text)) !== null) {
        const rule = keyRuleFor(c, m[1].replace(/\\(.)/g, "$1"));
        if (!rule) continue;
        const v = m[2];
        const quoted = v[0] === '"' || v[0] === "'";
        const start = m.index + m[0].length - v.length + (quoted ? 1 : 0);
        const end = m.index + m[0].length - (quoted && v.length > 1 && v[v.length - 1] === v[0] ? 1 : 0);
        if (end > start) spans.push({ start, end, rule });
      }
    }
  }
  for (const rule of c.detectors) {
    if (rule.target.kind !== "detector") continue;
    for (const s of detect(rule.target.detector, text)) spans.push({ ...s, rule });
  }
  if (spans.length === 0) return { text, count: 0 };
  // Earliest first; on overlap the longer span wins, so a card inside a masked field is not masked twice.
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let at = 0;
  let count = 0;
  for (const s of spans) {
    if (s.start < at) continue;
    const keep = s.keepPrefix ?? 0;
    out += text.slice(at, s.start + keep) + applyAction(text.slice(s.start + keep, s.end), s.rule.action, c.hashKey);
    at = s.end;
    count++;
  }
  return { text: out + text.slice(at), count };
}

/** Masks free text with the detectors and `key=value` field rules that apply to the role. */
export function maskText(text: string, ctx: MaskContext): { text: string; maskedCount: number } {
  const r = maskTextWith(compile(ctx), text);
  return { text: r.text, maskedCount: r.count };
}

function maskJsonTree(c: Compiled, root: JNode): { node: JNode; count: number } {
  let count = 0;
  const path: Seg[] = [];
  const walk = (node: JNode): JNode => {
    if (path.length) {
      const rule = fieldRuleFor(c, path);
      if (rule) {
        count++;
        const plain = node.t === "str" ? node.v : node.t === "num" || node.t === "lit" ? node.raw : null;
        if (plain === null) return { t: "str", v: rule.action.kind === "hash" ? applyAction(compactJson(node), rule.action, c.hashKey) : HIDDEN };
        return { t: "str", v: applyAction(plain, rule.action, c.hashKey) };
      }
    }
    switch (node.t) {
      case "str": {
        const r = maskTextWith(c, node.v);
        count += r.count;
        return r.count ? { t: "str", v: r.text } : node;
      }
      case "num": {
        const r = maskTextWith(c, node.raw, false);
        count += r.count;
        return r.count ? { t: "str", v: r.text } : node;
      }
      case "lit":
        return node;
      case "arr":
        return {
          t: "arr",
          items: node.items.map((item, k) => {
            path.push(k);
            const v = walk(item);
            path.pop();
            return v;
          }),
        };
      case "obj":
        return {
          t: "obj",
          members: node.members.map(([key, item]) => {
            path.push(key);
            const v = walk(item);
            path.pop();
            const k = maskTextWith(c, key, false);
            count += k.count;
            return [k.text, v] as [string, JNode];
          }),
        };
    }
  };
  const node = walk(root);
  return { node, count };
}

function looksLikeJson(text: string, contentType: string | null): boolean {
  const t = text.trimStart();
  return t.startsWith("{") || t.startsWith("[") || /json/i.test(contentType ?? "");
}

/**
 * What `ctx.role` may see of a payload. Returns the input bytes untouched ("original") only when
 * no rule applies to the role.
 */
export function maskPayload(bytes: Uint8Array, contentType: string | null, ctx: MaskContext, opts: MaskPayloadOptions = {}): MaskedPayload {
  const c = compile(ctx);
  const truncated = Boolean(opts.truncated);
  if (c.rules.length === 0) return { kind: "original", bytes, text: null, maskedCount: 0, truncated };
  return maskCompiled(c, bytes, contentType, { ...opts, truncated });
}

/** As maskPayload, with `rules` already chosen for the role (e.g. by sensitiveRules). */
export function maskPayloadWithRules(bytes: Uint8Array, contentType: string | null, rules: MaskingRule[], hashKey: Uint8Array | string, opts: MaskPayloadOptions = {}): MaskedPayload {
  const c = compile({ rules, role: "viewer", hashKey }, true);
  const truncated = Boolean(opts.truncated);
  if (c.rules.length === 0) return { kind: "original", bytes, text: null, maskedCount: 0, truncated };
  return maskCompiled(c, bytes, contentType, { ...opts, truncated });
}

function maskCompiled(c: Compiled, bytes: Uint8Array, contentType: string | null, opts: MaskPayloadOptions & { truncated: boolean }): MaskedPayload {
  const maxChars = opts.maxChars ?? LIMITS.maxChars;
  const text = decodeUtf8(bytes, opts.truncated);
  if (text === null || !looksLikeText(text)) {
    return { kind: "hidden", bytes: null, text: `binary payload hidden (${bytes.length} bytes)`, maskedCount: 1, truncated: opts.truncated };
  }
  if (!opts.truncated && looksLikeJson(text, contentType)) {
    try {
      const root = parseJson(text, { maxDepth: opts.maxDepth ?? LIMITS.maxDepth, maxNodes: opts.maxNodes ?? LIMITS.maxNodes });
      const masked = maskJsonTree(c, root);
      const out = stringifyJson(masked.node, maxChars);
      return { kind: "json", bytes: null, text: out.text, maskedCount: masked.count, truncated: out.cut };
    } catch (e) {
      if (e instanceof JsonLimitError) {
        return { kind: "hidden", bytes: null, text: `payload hidden: JSON too deep or too large to mask (${bytes.length} bytes, ${e.message})`, maskedCount: 1, truncated: opts.truncated };
      }
      // Not valid JSON: masked as text below (field rules still apply to "key": value pairs).
    }
  }
  const cut = text.length > maxChars;
  const r = maskTextWith(c, cut ? text.slice(0, maxChars) : text);
  return { kind: "text", bytes: null, text: r.text, maskedCount: r.count, truncated: opts.truncated || cut };
}

function headerRuleFor(c: Compiled, name: string): MaskingRule | null {
  for (const h of c.headers) if (globMatch(h.glob, name)) return h.rule;
  return null;
}

function maskValue(c: Compiled, v: DisplayValue, depth: number): { value: DisplayValue; count: number } {
  if (depth > 16) return { value: { t: "string", v: HIDDEN }, count: 1 };
  switch (v.t) {
    case "string":
    case "number":
    case "timestamp": {
      const r = maskTextWith(c, v.v);
      return r.count ? { value: { t: "string", v: r.text }, count: r.count } : { value: v, count: 0 };
    }
    case "bytes": {
      if (v.text === undefined) return { value: v, count: 0 };
      const r = maskTextWith(c, v.text);
      return r.count ? { value: { t: "string", v: r.text }, count: r.count } : { value: v, count: 0 };
    }
    case "array": {
      let count = 0;
      const items = v.v.map((item) => {
        const r = maskValue(c, item, depth + 1);
        count += r.count;
        return r.value;
      });
      return { value: count ? { t: "array", v: items } : v, count };
    }
    case "table": {
      let count = 0;
      const rows = v.v.map(([k, item]): [string, DisplayValue] => {
        const rule = headerRuleFor(c, k);
        if (rule) {
          count++;
          return [k, { t: "string", v: applyAction(valueText(item), rule.action, c.hashKey) }];
        }
        const r = maskValue(c, item, depth + 1);
        count += r.count;
        return [k, r.value];
      });
      return { value: count ? { t: "table", v: rows } : v, count };
    }
    default:
      return { value: v, count: 0 };
  }
}

function maskEntriesCompiled(c: Compiled, entries: HeaderEntry[]): { entries: HeaderEntry[]; maskedCount: number } {
  if (c.rules.length === 0) return { entries, maskedCount: 0 };
  let maskedCount = 0;
  const out = entries.map((e): HeaderEntry => {
    const rule = headerRuleFor(c, e.name);
    if (rule) {
      maskedCount++;
      return { name: e.name, value: { t: "string", v: applyAction(valueText(e.value), rule.action, c.hashKey) } };
    }
    const r = maskValue(c, e.value, 0);
    maskedCount += r.count;
    return r.count ? { name: e.name, value: r.value } : e;
  });
  return { entries: out, maskedCount };
}

/** Headers or properties as `ctx.role` may see them: named headers per rule, values through the detectors. */
export function maskHeaders(entries: HeaderEntry[], ctx: MaskContext): { entries: HeaderEntry[]; maskedCount: number } {
  return maskEntriesCompiled(compile(ctx), entries);
}

export function maskHeadersWithRules(entries: HeaderEntry[], rules: MaskingRule[], hashKey: Uint8Array | string) {
  return maskEntriesCompiled(compile({ rules, role: "viewer", hashKey }, true), entries);
}

/** Free text (exception messages, stack traces) with already chosen rules. */
export function maskTextWithRules(text: string, rules: MaskingRule[], hashKey: Uint8Array | string): { text: string; maskedCount: number } {
  const r = maskTextWith(compile({ rules, role: "viewer", hashKey }, true), text);
  return { text: r.text, maskedCount: r.count };
}

/** The triage index's flat header map (name → text). */
export function maskHeaderRecord(record: Record<string, string>, rules: MaskingRule[], hashKey: Uint8Array | string): { headers: Record<string, string>; maskedCount: number } {
  const entries = Object.entries(record).map(([name, v]) => ({ name, value: { t: "string", v } as DisplayValue }));
  const r = maskHeadersWithRules(entries, rules, hashKey);
  const headers: Record<string, string> = Object.create(null);
  for (const e of r.entries) headers[e.name] = valueText(e.value);
  return { headers: { ...headers }, maskedCount: r.maskedCount };
}

/** A DLQ is sensitive when a pattern on its connection (or on "*") matches its name. */
export function isSensitiveDlq(list: Array<{ connectionId: string; pattern: string }>, connectionId: string, queue: string): boolean {
  return list.some((s) => (s.connectionId === "*" || s.connectionId === connectionId) && globMatch(s.pattern, queue));
}
