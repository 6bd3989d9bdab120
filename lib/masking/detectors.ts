import type { Detector } from "./types";

/**
 * Recognisers for secrets and personal data inside free text. Each returns the spans to mask;
 * candidates are cheap regular expressions (bounded quantifiers, no nested repetition) or plain
 * scans, confirmed by a checksum where one exists (Luhn for cards, mod-97 for IBANs, a decoded
 * `user:password` for Basic credentials), so order numbers and timestamps are not masked as cards.
 * Below them, the scanners of the shapes that carry a secret under a name (key=value, XML, header
 * lines). All of it is linear in the text: see hostile-input.test.ts.
 */

export interface Span {
  start: number;
  end: number;
  /** For bearer tokens: keep the scheme word ("Bearer ") and mask only the credential. */
  keepPrefix?: number;
}

export function luhnValid(digits: string): boolean {
  if (!/^\d{12,19}$/.test(digits)) return false;
  let sum = 0;
  let dbl = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    dbl = !dbl;
  }
  return sum % 10 === 0;
}

export function ibanValid(raw: string): boolean {
  const iban = raw.replace(/[\s-]/g, "").toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rem = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const val = code >= 65 ? String(code - 55) : ch;
    for (const d of val) rem = (rem * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return rem === 1;
}

const CARD = /(?<![\d-])\d(?:[ -]?\d){11,18}(?![\d])/g;
/** After an "@" (the local part is found by looking back from it, at most 64 characters). */
const EMAIL_DOMAIN = /[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}/y;
const IBAN = /\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,34}\b/gi;
const BEARER = /\b(?:Bearer|Token)[ \t]+[A-Za-z0-9\-._~+/]{8,}=*/gi;
/** `Basic` + base64 of `user:password`; confirmed by decoding (see basicCredential). */
const BASIC = /\bBasic[ \t]+[A-Za-z0-9+/]{4,}={0,2}/gi;
const NEGOTIATE = /\b(?:Negotiate|NTLM)[ \t]+[A-Za-z0-9+/]{16,}={0,2}/gi;
const API_KEY = new RegExp(
  [
    "\\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", // Stripe
    "\\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}", // OpenAI-style
    "\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b", // AWS access key id
    "\\bgh[pousr]_[A-Za-z0-9]{30,}", // GitHub tokens
    "\\bgithub_pat_[A-Za-z0-9_]{30,}",
    "\\bxox[abprs]-[A-Za-z0-9-]{10,}", // Slack
    "\\bAIza[0-9A-Za-z_-]{35}", // Google API key
    "\\bglpat-[A-Za-z0-9_-]{20,}", // GitLab
  ].join("|"),
  "g",
);

/**
 * A Basic credential is base64 of `user:password`: decoded, it holds a colon and no control
 * characters, which "Basic plan" or "Basic authentication" do not.
 */
export function basicCredential(b64: string): boolean {
  const head = b64.slice(0, 4096);
  const raw = Buffer.from(head.slice(0, head.length - (head.length % 4)) || head, "base64").toString("utf8");
  return raw.includes(":") && !/[\u0000-\u001f\u007f\ufffd]/.test(raw);
}

const isEmailLocal = (c: number) =>
  (c >= 97 && c <= 122) ||
  (c >= 65 && c <= 90) ||
  (c >= 48 && c <= 57) ||
  c === 46 ||
  c === 95 ||
  c === 37 ||
  c === 43 ||
  c === 45;
const isBase64Url = (c: number) =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45;

/**
 * E-mail addresses, found from each "@": as `[A-Za-z0-9._%+-]{1,64}@domain` would match, without
 * trying up to 64 characters at every position of a long word (which cost a second per megabyte).
 */
function emails(text: string, out: Span[]): void {
  let floor = 0;
  for (let at = text.indexOf("@"); at >= 0; at = text.indexOf("@", at + 1)) {
    let s = at;
    while (s > floor && at - s < 64 && isEmailLocal(text.charCodeAt(s - 1))) s--;
    if (s === at) continue;
    EMAIL_DOMAIN.lastIndex = at + 1;
    const m = EMAIL_DOMAIN.exec(text);
    if (!m) continue;
    out.push({ start: s, end: at + 1 + m[0].length });
    floor = at + 1 + m[0].length;
    at = floor - 1;
  }
}

function base64UrlRun(text: string, from: number): number {
  let i = from;
  while (i < text.length && isBase64Url(text.charCodeAt(i))) i++;
  return i;
}

/**
 * JSON Web Tokens: `eyJ…` `.eyJ…` `.…` (header and payload are base64url JSON objects). A token
 * starts where a base64url run starts, so each run is read at most twice whatever the input (the
 * former regular expression retried every "eyJ" of "eyJa-eyJa-…" to the end: quadratic).
 */
function jwts(text: string, out: Span[]): void {
  for (let at = text.indexOf("eyJ"); at >= 0; at = text.indexOf("eyJ", at + 1)) {
    if (at > 0 && isBase64Url(text.charCodeAt(at - 1))) continue;
    const a = base64UrlRun(text, at + 3);
    if (a - at < 7 || text[a] !== "." || !text.startsWith("eyJ", a + 1)) continue;
    const b = base64UrlRun(text, a + 4);
    if (b - a < 8 || text[b] !== ".") continue;
    const end = base64UrlRun(text, b + 1);
    out.push({ start: at, end });
    at = end - 1;
  }
}

/**
 * The spans of one detector in `text`, appended to `out` (a new array when none is given). The scan
 * runs every detector over every letter's message and most find nothing: plain `exec` loops, no
 * generator or result object per call.
 */
export function detect(detector: Detector, text: string, out: Span[] = []): Span[] {
  switch (detector) {
    case "card":
      CARD.lastIndex = 0;
      for (let m = CARD.exec(text); m !== null; m = nextMatch(CARD, text, m)) {
        if (luhnValid(m[0].replace(/[ -]/g, ""))) out.push({ start: m.index, end: m.index + m[0].length });
      }
      break;
    case "email":
      emails(text, out);
      break;
    case "iban":
      IBAN.lastIndex = 0;
      for (let m = IBAN.exec(text); m !== null; m = nextMatch(IBAN, text, m)) {
        // The candidate may run into a following word ("DE89... EUR"); try shorter cuts at spaces too.
        let s = m[0];
        while (s.length >= 15) {
          if (ibanValid(s)) {
            out.push({ start: m.index, end: m.index + s.length });
            break;
          }
          const sp = s.lastIndexOf(" ");
          if (sp < 0) break;
          s = s.slice(0, sp);
        }
      }
      break;
    case "bearer":
      for (let k = 0; k < AUTH_SCHEMES.length; k++) {
        const re = AUTH_SCHEMES[k];
        re.lastIndex = 0;
        for (let m = re.exec(text); m !== null; m = nextMatch(re, text, m)) {
          const prefix = /^\S+[ \t]+/.exec(m[0])![0].length;
          if (re === BASIC && !basicCredential(m[0].slice(prefix))) continue;
          out.push({ start: m.index, end: m.index + m[0].length, keepPrefix: prefix });
        }
      }
      break;
    case "jwt":
      jwts(text, out);
      break;
    case "api-key":
      API_KEY.lastIndex = 0;
      for (let m = API_KEY.exec(text); m !== null; m = nextMatch(API_KEY, text, m))
        out.push({ start: m.index, end: m.index + m[0].length });
      break;
  }
  return out;
}

const AUTH_SCHEMES = [BEARER, BASIC, NEGOTIATE];

/** The global regex's next match after `m` (an empty match steps one on, so the loop ends). */
function nextMatch(re: RegExp, text: string, m: RegExpExecArray): RegExpExecArray | null {
  if (m[0].length === 0) re.lastIndex++;
  return re.exec(text);
}

/*
 * Shapes that carry a secret under a name: `"key": value` (JSON, also inside JSON strings at any
 * escaping depth), `key=value` / `key: value` (text, forms, logs), XML elements and attributes, and
 * `Name: value` header lines. Each scanner reports the span of a value whose name `lookup` knows,
 * always the whole value however long; a value that does not end (a cut payload, a malformed
 * document) runs to the end of the text. Every scanner is a single forward pass: no position is
 * rescanned more than a constant number of times, so hostile input costs linear time.
 */

export interface NamedSpan<T> extends Span {
  rule: T;
}

/** Where the scanners put what they find. */
export interface SpanSink<T> {
  push(span: NamedSpan<T>): unknown;
}

const BACKSLASH = 92;
const QUOTE = 34;

function backslashesBefore(text: string, i: number, floor: number): number {
  let r = 0;
  while (i - r - 1 >= floor && text.charCodeAt(i - r - 1) === BACKSLASH) r++;
  return r;
}

/**
 * The escaping depth a quote after `r` backslashes belongs to: 0 for `"`, 1 for `\"` (a quote of a
 * JSON text held in a JSON string), 2 for `\\\"`, and so on. Decoding one level turns `\\` into `\`
 * and `\"` into `"`, so the depth is the number of trailing one bits of `r`.
 */
function quoteDepth(r: number): number {
  let d = 0;
  while (r % 2 === 1) {
    d++;
    r = (r - 1) / 2;
  }
  return d;
}

/**
 * The end of a string whose content starts at `from` and whose quotes are at escaping `depth`:
 * `end` is where its closing quote (with that quote's backslashes) starts, `next` is past it. A
 * quote of a shallower depth ends it too (the string holding it ended).
 */
function stringEnd(text: string, from: number, depth: number): { end: number; next: number; depth: number } {
  for (let i = from; ; ) {
    const q = text.indexOf('"', i);
    if (q < 0) return { end: text.length, next: text.length, depth: -1 };
    const d = quoteDepth(backslashesBefore(text, q, from));
    if (d <= depth) return { end: q - (2 ** d - 1), next: q + 1, depth: d };
    i = q + 1;
  }
}

/** The end of a `{…}` or `[…]` that opens at `from`, its strings at escaping `depth`. */
function structureEnd(text: string, from: number, depth: number): number {
  let open = 0;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) open++;
    else if (c === 125 || c === 93) {
      if (--open === 0) return i + 1;
    } else if (c === QUOTE) {
      const d = quoteDepth(backslashesBefore(text, i, from));
      if (d < depth) return i - (2 ** d - 1);
      if (d === depth) {
        const s = stringEnd(text, i + 1, depth);
        if (s.depth >= 0 && s.depth < depth) return s.end;
        i = s.next - 1;
      }
    }
  }
  return text.length;
}

function singleQuotedEnd(text: string, from: number): number {
  for (let i = from; ; ) {
    const q = text.indexOf("'", i);
    if (q < 0) return text.length;
    if (backslashesBefore(text, q, from) % 2 === 0) return q;
    i = q + 1;
  }
}

// A bare value also ends at an escaped newline, tab or quote: in a JSON string seen as text
// (`…password=x\nnext: y…`) that is where its line ends.
const UNQUOTED_JSON_STOP = /[\s,}\]"]|\\[nrt"]/g;
const UNQUOTED_TEXT_STOP = /[\s&,;"'{}[\]]|\\[nrt"]/g;
const FORM_VALUE_STOP = /[\s&,;"'{}[\]=]|\\[nrt"]/g;

function stopAt(re: RegExp, text: string, from: number): number {
  re.lastIndex = from;
  const m = re.exec(text);
  return m ? m.index : text.length;
}

/** The value that starts at `at` in text whose quotes are at escaping `depth`: a string, a structure, or a bare token. */
function valueSpan(
  text: string,
  at: number,
  depth: number,
  plain: boolean,
): { start: number; end: number; bare: boolean } {
  let b = 0;
  while (text.charCodeAt(at + b) === BACKSLASH) b++;
  if (text.charCodeAt(at + b) === QUOTE) {
    const start = at + b + 1;
    return { start, end: stringEnd(text, start, quoteDepth(b)).end, bare: false };
  }
  const c = text[at];
  if (plain && c === "'") return { start: at + 1, end: singleQuotedEnd(text, at + 1), bare: false };
  if (c === "{" || c === "[") return { start: at, end: structureEnd(text, at, depth), bare: false };
  return { start: at, end: stopAt(plain ? UNQUOTED_TEXT_STOP : UNQUOTED_JSON_STOP, text, at), bare: true };
}

const NOT_A_FIELD = /(?:error|exception)$/i;

// `"key":` at any escaping depth (the backslashes before the closing quote repeat the opening's).
const JSON_KEY = /(?<!\\)(\\*)"([^"\\\n]{1,200})\1"\s{0,16}:\s{0,16}/g;
// `key=` / `key:` in text: Java toString, logs, properties, YAML, forms (`a[b]`, `%5B` allowed in
// keys). Not inside a word, a quoted key or a dotted name, except right after an escaped newline.
const PLAIN_KEY = /(?:(?<![\w"'%\][.-])|(?<=\\[nrt]))([A-Za-z_][\w.\-[\]%]{0,100})\s{0,3}([=:])\s{0,3}/g;

/**
 * `"key": value` and `key=value` / `key: value` pairs whose key `lookup` knows. `onBare` sees the
 * other bare `key=value` values (form fields, to decode and mask inside).
 */
export function scanKeyValues<T>(
  text: string,
  lookup: (key: string) => T | null,
  out: SpanSink<T>,
  onBare?: (start: number, end: number) => void,
): void {
  for (const [re, plain] of [
    [JSON_KEY, false],
    [PLAIN_KEY, true],
  ] as const) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const at = m.index + m[0].length;
      const key = plain ? m[1] : m[2];
      // `TokenExpiredError: jwt expired` names an exception, not a field.
      const rule = plain && m[2] === ":" && NOT_A_FIELD.test(key) ? null : lookup(key);
      const depth = plain ? 0 : quoteDepth(m[1].length);
      if (rule === null) {
        // A bare value here ends at the next "=" too, so these values never overlap (`a=a=a=…`
        // would otherwise scan to its end once per key).
        if (plain && onBare && m[2] === "=" && !/["'{[\\]/.test(text[at] ?? "\\")) {
          const end = stopAt(FORM_VALUE_STOP, text, at);
          if (end > at) onBare(at, end);
        }
        // Pairs inside this value are found from here on.
        re.lastIndex = at;
        continue;
      }
      const v = valueSpan(text, at, depth, plain);
      if (v.end > v.start) out.push({ start: v.start, end: v.end, rule });
      re.lastIndex = Math.max(at, v.end);
    }
  }
}

const XML_NAME = /[A-Za-z_][\w.:-]{0,200}/y;
const XML_ATTR_NAME = /[^\s=/<>"']{1,200}/y;

const localName = (name: string) => name.slice(name.lastIndexOf(":") + 1);

function sticky(re: RegExp, text: string, at: number): string | null {
  re.lastIndex = at;
  const m = re.exec(text);
  return m ? m[0] : null;
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * The attributes of a start tag from `at` (just past its name) to its end: `end` is past `>`
 * (or where the tag stopped: a `<` or the end of the text); `selfClosing` for `/>`. A quoted value
 * stops at its quote or at `<`, which XML does not allow inside one, so a broken tag never swallows
 * the rest of a document. Each attribute whose name `lookup` knows is reported.
 */
function startTag<T>(
  text: string,
  at: number,
  lookup: ((name: string) => T | null) | null,
  out: SpanSink<T>,
): { end: number; closed: boolean; selfClosing: boolean } {
  const n = text.length;
  let i = at;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === 62) return { end: i + 1, closed: true, selfClosing: false };
    if (c === 47 && text.charCodeAt(i + 1) === 62) return { end: i + 2, closed: true, selfClosing: true };
    if (c === 60) return { end: i, closed: false, selfClosing: false };
    const name = sticky(XML_ATTR_NAME, text, i);
    if (name === null) {
      i++;
      continue;
    }
    i += name.length;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (text[i] !== "=") continue;
    i++;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    const q = text[i];
    let start = i;
    let end: number;
    if (q === '"' || q === "'") {
      start = i + 1;
      end = start;
      while (end < n && text[end] !== q && text[end] !== "<") end++;
      i = end < n && text[end] === q ? end + 1 : end;
    } else {
      end = start;
      while (end < n && !isSpace(text.charCodeAt(end)) && text[end] !== ">" && text[end] !== "<") end++;
      i = end;
    }
    const rule = lookup ? lookup(localName(name)) : null;
    if (rule !== null && end > start) out.push({ start, end, rule });
  }
  return { end: n, closed: false, selfClosing: false };
}

/**
 * Where the element `name` that opened just before `from` ends: `contentEnd` is where its end tag
 * starts, `next` past that tag. Same-named children nest; CDATA sections and comments are skipped
 * whole (an end tag inside them does not count). No end tag: the end of the text.
 */
function elementEnd(text: string, from: number, name: string): { contentEnd: number; next: number } {
  const n = text.length;
  let open = 1;
  let i = from;
  const boundary = (k: number) => k >= n || isSpace(text.charCodeAt(k)) || text[k] === ">" || text[k] === "/";
  for (;;) {
    const lt = text.indexOf("<", i);
    if (lt < 0) return { contentEnd: n, next: n };
    if (text.startsWith("<![CDATA[", lt) || text.startsWith("<!--", lt)) {
      const close = text.startsWith("<!--", lt) ? "-->" : "]]>";
      const e = text.indexOf(close, lt + 4);
      if (e < 0) return { contentEnd: n, next: n };
      i = e + close.length;
      continue;
    }
    if (text[lt + 1] === "/" && text.startsWith(name, lt + 2) && boundary(lt + 2 + name.length)) {
      if (--open === 0) {
        const gt = text.indexOf(">", lt);
        return { contentEnd: lt, next: gt < 0 ? n : gt + 1 };
      }
      i = lt + 2;
      continue;
    }
    if (text.startsWith(name, lt + 1) && boundary(lt + 1 + name.length)) {
      const tag = startTag(text, lt + 1 + name.length, null, []);
      if (tag.closed && !tag.selfClosing) open++;
      i = tag.end > lt ? tag.end : lt + 1;
      continue;
    }
    i = lt + 1;
  }
}

/**
 * XML (and XML-like) text: the content of elements whose local name `lookup` knows (`<password>`,
 * `<ns:token>`, children and CDATA included) and the values of such attributes
 * (`password="…"`). Everything else, comments and CDATA included, is scanned as ordinary text, so
 * markup quoted inside them is found too.
 */
export function scanXml<T>(text: string, lookup: (name: string) => T | null, out: SpanSink<T>): void {
  const n = text.length;
  let i = 0;
  for (;;) {
    const lt = text.indexOf("<", i);
    if (lt < 0) return;
    const name = sticky(XML_NAME, text, lt + 1);
    const after = name === null ? -1 : lt + 1 + name.length;
    if (
      name === null ||
      (after < n && !isSpace(text.charCodeAt(after)) && text[after] !== ">" && text[after] !== "/")
    ) {
      i = lt + 1;
      continue;
    }
    const tag = startTag(text, after, lookup, out);
    const rule = tag.closed && !tag.selfClosing ? lookup(localName(name)) : null;
    if (rule !== null) {
      const e = elementEnd(text, tag.end, name);
      if (e.contentEnd > tag.end) out.push({ start: tag.end, end: e.contentEnd, rule });
      i = e.next;
    } else {
      i = tag.end > lt ? tag.end : lt + 1;
    }
  }
}

// A header line: at a line start (or after an escaped `\n` of a JSON string), optionally after
// curl's `> ` / `< `. Names with a dot are left out (exception class names: `com.acme.TokenError: …`),
// as are names ending in Error/Exception (`TokenExpiredError: jwt expired`).
const HEADER_LINE =
  /(?:^|(?<=\\[nr]))[ \t]{0,16}(?:[<>][ \t]{0,4})?([A-Za-z0-9][A-Za-z0-9!#$%&'*+^_`|~-]{0,99})[ \t]{0,16}:[ \t]*/gm;

/**
 * `Name: value` lines of header dumps (HTTP requests, curl -v, mail) whose name `lookup` knows:
 * the whole value up to the end of its line, with folded continuation lines. Inside a JSON string
 * seen as text (lines split by `\n` escapes) the value also ends at the escape or the string's quote.
 */
export function scanHeaderLines<T>(text: string, lookup: (name: string) => T | null, out: SpanSink<T>): void {
  const n = text.length;
  HEADER_LINE.lastIndex = 0;
  for (let m = HEADER_LINE.exec(text); m !== null; m = HEADER_LINE.exec(text)) {
    if (m[0].length === 0) {
      HEADER_LINE.lastIndex++;
      continue;
    }
    if (NOT_A_FIELD.test(m[1])) continue;
    const rule = lookup(m[1]);
    if (rule === null) continue;
    const start = m.index + m[0].length;
    const escaped = m.index > 0 && text[m.index - 1] !== "\n" && text[m.index - 1] !== "\r";
    let end = start;
    for (;;) {
      while (end < n) {
        const c = text.charCodeAt(end);
        if (c === 10 || c === 13) break;
        if (c === BACKSLASH && (text[end + 1] === "n" || text[end + 1] === "r")) break;
        if (escaped && c === QUOTE && backslashesBefore(text, end, start) % 2 === 0) break;
        end++;
      }
      // A folded continuation line (starts with a space or tab) belongs to the value.
      let k = end;
      if (text[k] === "\r") k++;
      if (text[k] === "\n") k++;
      if (!escaped && k > end && k < n && (text[k] === " " || text[k] === "\t")) end = k;
      else break;
    }
    // Trailing blanks and a CR are not part of the value.
    let e = end;
    while (e > start && (text[e - 1] === " " || text[e - 1] === "\t")) e--;
    if (e > start) out.push({ start, end: e, rule });
    HEADER_LINE.lastIndex = Math.max(HEADER_LINE.lastIndex, end);
  }
}

const XML_ENTITY = /&(?:lt|gt|quot|apos|amp|#(?:60|62|34|39|38)|#x(?:3[cCeE]|2[2267]));/g;
const ENTITY_CHAR: Record<string, string> = {
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  amp: "&",
  "#60": "<",
  "#62": ">",
  "#34": '"',
  "#39": "'",
  "#38": "&",
};

/**
 * Markup escaped as text (`&lt;password&gt;…`, an XML document carried inside another or in
 * HTML), unescaped once: `text` to scan, and `at[i]`, where its character i starts in the input
 * (`at[text.length]` is the input's length), to map what is found back.
 */
export function unescapedMarkup(input: string): { text: string; at: Int32Array } {
  const at = new Int32Array(input.length + 1);
  let out = "";
  let n = 0;
  let last = 0;
  const copy = (from: number, to: number) => {
    out += input.slice(from, to);
    for (let i = from; i < to; i++) at[n++] = i;
  };
  XML_ENTITY.lastIndex = 0;
  for (let m = XML_ENTITY.exec(input); m !== null; m = XML_ENTITY.exec(input)) {
    copy(last, m.index);
    const name = m[0].slice(1, -1).toLowerCase();
    const hex = name.startsWith("#x") ? String.fromCharCode(parseInt(name.slice(2), 16)) : undefined;
    out += hex ?? ENTITY_CHAR[name];
    at[n++] = m.index;
    last = m.index + m[0].length;
  }
  copy(last, input.length);
  at[n] = input.length;
  return { text: out, at: at.subarray(0, n + 1) };
}
