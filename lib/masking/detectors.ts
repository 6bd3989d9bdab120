import type { Detector } from "./types";

/**
 * Recognisers for secrets and personal data inside free text. Each returns the spans to mask;
 * candidates are cheap regular expressions (bounded quantifiers, no nested repetition) confirmed
 * by a checksum where one exists (Luhn for cards, mod-97 for IBANs), so order numbers and
 * timestamps are not masked as cards.
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
const EMAIL = /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}/g;
const IBAN = /\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,34}\b/gi;
const BEARER = /\b(?:Bearer|Token)[ \t]+[A-Za-z0-9\-._~+/]{8,}=*/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
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

function* matches(re: RegExp, text: string): Generator<RegExpExecArray> {
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    yield m;
    if (m[0].length === 0) re.lastIndex++;
  }
}

export function detect(detector: Detector, text: string): Span[] {
  const out: Span[] = [];
  switch (detector) {
    case "card":
      for (const m of matches(CARD, text)) {
        if (luhnValid(m[0].replace(/[ -]/g, ""))) out.push({ start: m.index, end: m.index + m[0].length });
      }
      break;
    case "email":
      for (const m of matches(EMAIL, text)) out.push({ start: m.index, end: m.index + m[0].length });
      break;
    case "iban":
      for (const m of matches(IBAN, text)) {
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
      for (const m of matches(BEARER, text)) {
        const prefix = /^\S+[ \t]+/.exec(m[0])![0].length;
        out.push({ start: m.index, end: m.index + m[0].length, keepPrefix: prefix });
      }
      break;
    case "jwt":
      for (const m of matches(JWT, text)) out.push({ start: m.index, end: m.index + m[0].length });
      break;
    case "api-key":
      for (const m of matches(API_KEY, text)) out.push({ start: m.index, end: m.index + m[0].length });
      break;
  }
  return out;
}
